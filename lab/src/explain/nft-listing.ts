// `nft list table ip kube-proxy` read back into the objects of a transaction: the chains (base chains with
// their hook and priority), sets, maps, their elements and the rules, each in the renderer's words
// (nft-syntax.ts). What it cannot place is kept, one line each, so the caller can say exactly what it skipped.
import type { ChainObject, MapObject, NFTFamily, NFTObject, SetObject } from "@switchyard/proxier";
import { rendererRule, rendererVerdict } from "./nft-syntax.js";

export interface NftListing {
  family: NFTFamily;
  table: string;
  objects: NFTObject[];
  /** Lines of the listing that were not read, with why. */
  skipped: string[];
}

/** nft's named priorities (netfilter's standard ones, for the ip and ip6 families). */
const namedPriorities: Record<string, number> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};

/** "dstnat - 10", "filter", "-110" → a number; undefined for anything else. */
export function parsePriority(text: string): number | undefined {
  const m = /^(-?\d+|[a-z]+)(?: ([+-]) (\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const base = /^-?\d+$/.test(m[1] ?? "") ? Number(m[1]) : namedPriorities[m[1] ?? ""];
  if (base === undefined) return undefined;
  const offset = Number(m[3] ?? 0);
  return m[2] === "-" ? base - offset : base + offset;
}

/** "3h", "10800s", "1d2h" → seconds. */
function parseDuration(text: string): number | undefined {
  const units: Record<string, number> = { d: 86400, h: 3600, m: 60, s: 1 };
  const parts = [...text.matchAll(/(\d+)([dhms])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] ?? "s"] ?? 0), 0);
}

/** Splits on commas outside quotes and braces. */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = "";
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && ch === "{") depth++;
    if (!quoted && ch === "}") depth--;
    if (!quoted && depth === 0 && ch === ",") {
      out.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (current.trim() !== "") out.push(current.trim());
  return out;
}

const unquote = (name: string) => name.replace(/^"(.*)"$/, "$1");

/** A trailing `comment "..."` split off a rule or element. */
function splitComment(text: string): { body: string; comment?: string } {
  const m = /^(.*?) comment "((?:[^"\\]|\\.)*)"$/.exec(text);
  return m ? { body: m[1] ?? "", comment: m[2] ?? "" } : { body: text };
}

/** One element of a set or map: `key [timeout T] [expires E] [comment "c"] [: value]`. */
function parseElement(text: string, container: { set?: string; map?: string }): NFTObject {
  const colon = text.lastIndexOf(" : ");
  const keyPart = colon < 0 ? text : text.slice(0, colon);
  const value = colon < 0 ? undefined : rendererVerdict(text.slice(colon + 3));
  const { body, comment } = splitComment(keyPart.trim());
  // A dynamic set's element carries its timeout and time left; neither is part of the key.
  const key = body
    .replace(/ (timeout|expires) \S+/g, "")
    .split(" . ")
    .map((k) => k.trim());
  return {
    kind: "element",
    ...container,
    key,
    ...(value === undefined ? {} : { value: [value] }),
    ...(comment === undefined ? {} : { comment }),
  };
}

interface Block {
  kind: "chain" | "set" | "map" | "other";
  name: string;
  lines: string[];
}

/** The table's header and its blocks, with element lists joined onto one line. */
function blocksOf(text: string): {
  header: string | undefined;
  comment?: string;
  blocks: Block[];
  skipped: string[];
} {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  const skipped: string[] = [];
  let header: string | undefined;
  let comment: string | undefined;
  let block: Block | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line === "") continue;
    const table = /^table (\S+) (\S+) \{$/.exec(line);
    if (table && header === undefined) {
      header = `${table[1]} ${table[2]}`;
      continue;
    }
    const open = /^(chain|set|map|counter|flowtable|quota|limit|ct \S+) (\S+|"[^"]*") \{$/.exec(line);
    if (open) {
      const kind = open[1] === "chain" || open[1] === "set" || open[1] === "map" ? open[1] : "other";
      block = { kind, name: unquote(open[2] ?? ""), lines: [] };
      continue;
    }
    if (line === "}") {
      if (block) blocks.push(block);
      block = undefined;
      continue;
    }
    let full = line;
    // `elements = { a, b,` continues on the lines below until the closing brace.
    if (/^elements = \{/.test(line))
      while (!/\}$/.test(full) && i + 1 < lines.length) full += ` ${(lines[++i] ?? "").trim()}`;
    if (block) block.lines.push(full);
    else if (/^comment "/.test(full)) comment = JSON.parse(full.slice("comment ".length)) as string;
    else skipped.push(`${full} (outside any chain, set or map)`);
  }
  return { header, ...(comment === undefined ? {} : { comment }), blocks, skipped };
}

/** A chain block: the chain (a base chain's type, hook and priority) and its rules. */
function chainObjects(block: Block, problems: string[]): NFTObject[] {
  let chain: ChainObject = { kind: "chain", name: block.name };
  const rules: NFTObject[] = [];
  for (const line of block.lines) {
    const base =
      /^type (filter|nat|route) hook (prerouting|input|forward|output|postrouting) priority (.+?);(?: policy (\w+);)?$/.exec(
        line,
      );
    if (base) {
      const priority = parsePriority(base[3] ?? "");
      if (priority === undefined) problems.push(`chain ${block.name}: priority "${base[3]}" not understood`);
      if (base[4] !== undefined && base[4] !== "accept")
        problems.push(
          `chain ${block.name}: policy ${base[4]} (the tracer treats every base chain as policy accept)`,
        );
      const type = base[1] as "filter" | "nat" | "route";
      const hook = base[2] as NonNullable<ChainObject["hook"]>;
      chain = { ...chain, type, hook, priority: priority ?? 0 };
      continue;
    }
    if (/^comment "/.test(line)) {
      chain = { ...chain, comment: JSON.parse(line.slice("comment ".length)) as string };
      continue;
    }
    const { body, comment } = splitComment(line);
    rules.push({
      kind: "rule",
      chain: block.name,
      rule: rendererRule(body),
      ...(comment === undefined ? {} : { comment }),
    });
  }
  return [chain, ...rules];
}

/** A set or map block: its definition and its elements. */
function containerObjects(block: Block, problems: string[]): NFTObject[] {
  const props: { type?: string; flags?: string[]; timeout?: number; comment?: string } = {};
  let elements: string[] = [];
  for (const line of block.lines) {
    const [word = "", ...rest] = line.split(" ");
    const value = rest.join(" ");
    if (word === "type") props.type = value;
    else if (word === "flags") props.flags = value.split(",");
    else if (word === "timeout") props.timeout = parseDuration(value);
    else if (word === "comment") props.comment = JSON.parse(value) as string;
    else if (word === "elements")
      elements = splitTopLevel(line.replace(/^elements = \{\s*/, "").replace(/\s*\}$/, ""));
    // Sizes, garbage collection and memory policies change nothing a packet meets.
    else if (!["size", "gc-interval", "policy", "auto-merge"].includes(word))
      problems.push(`${block.kind} ${block.name}: "${line}" not understood`);
  }
  const def: SetObject | MapObject =
    block.kind === "set"
      ? { kind: "set", name: block.name, ...props }
      : { kind: "map", name: block.name, ...props };
  const where = block.kind === "set" ? { set: block.name } : { map: block.name };
  return [def, ...elements.map((e) => parseElement(e, where))];
}

/**
 * Reads the output of `nft list table <family> <name>`. Sets and maps come first, so that every rule's
 * references exist when the objects are applied in order.
 */
export function parseNftListing(text: string): NftListing {
  const { header, comment, blocks, skipped } = blocksOf(text);
  if (header === undefined) throw new Error("not an nft table listing: no `table <family> <name> {` line");
  const [family = "", table = ""] = header.split(" ");
  if (family !== "ip" && family !== "ip6" && family !== "inet")
    throw new Error(`nft table ${header}: family ${family} is not one kube-proxy uses`);
  const problems = [...skipped];
  const containers = blocks.filter((b) => b.kind === "set" || b.kind === "map");
  const chains = blocks.filter((b) => b.kind === "chain");
  for (const b of blocks.filter((x) => x.kind === "other"))
    problems.push(`${b.name}: an object the tracer does not use`);
  const chainParts = chains.map((b) => chainObjects(b, problems));
  const objects: NFTObject[] = [
    { kind: "table", ...(comment === undefined ? {} : { comment }) },
    ...chainParts.map((parts) => parts[0] as NFTObject),
    ...containers.flatMap((b) => containerObjects(b, problems)),
    ...chainParts.flatMap((parts) => parts.slice(1)),
  ];
  return { family, table, objects, skipped: problems };
}

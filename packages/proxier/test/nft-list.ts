// Canonical form of `nft list table` output: objects sorted by header, set elements
// sorted, rule order inside a chain kept. Both sides of the upstream diff are printed by
// the same nft, so only ordering can differ for equal content.

function splitElements(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of body) {
    if (ch === "{") depth++;
    if (ch === "}") depth--;
    if (ch === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (current.trim() !== "") out.push(current.trim());
  return out;
}

export function canonicalNFTList(text: string): string[] {
  const lines = text.split("\n").map((l) => l.replace(/\s+$/, ""));
  const blocks: string[][] = [];
  const header: string[] = [];
  let block: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const trimmed = line.trim();
    if (trimmed === "") continue;
    if (/^\t(chain|set|map|flowtable|counter) \S+ \{$/.test(line)) {
      block = [trimmed];
      continue;
    }
    if (line === "\t}") {
      if (block) blocks.push(block);
      block = undefined;
      continue;
    }
    if (!block) {
      header.push(trimmed);
      continue;
    }
    if (trimmed.startsWith("elements = {")) {
      let body = trimmed.slice("elements = {".length);
      while (!body.trimEnd().endsWith("}") && i + 1 < lines.length) body += ` ${(lines[++i] ?? "").trim()}`;
      body = body.trimEnd().slice(0, -1);
      block.push(
        ...splitElements(body)
          .sort()
          .map((e) => `element ${e}`),
      );
      continue;
    }
    block.push(trimmed);
  }
  blocks.sort((a, b) => ((a[0] ?? "") < (b[0] ?? "") ? -1 : 1));
  return [...header, ...blocks.flatMap((b) => [...b, "}"])];
}

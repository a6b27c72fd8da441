// A table as the kernel holds it, read over netlink and written out attribute by attribute, for
// comparing two tables byte for byte: what `nft -f` left in one namespace and what the netlink
// writer left in another. Handles are left out (each table numbers its own objects), and anonymous
// sets are named after the rule that uses them (their names are all that may differ).
import { NetfilterSocket } from "../src/apply/netlink-socket.js";
import { CHAIN, RULE, SET, SET_FLAG, TABLE } from "../src/nftables/netlink/constants.js";
import {
  type DumpKind,
  dumpRequest,
  newDumpProgress,
  readDumpDatagram,
} from "../src/nftables/netlink/dump.js";
import {
  type Attribute,
  attr,
  attrString,
  type NetlinkMessage,
  parseAttributes,
  parseMessages,
} from "../src/nftables/netlink/reader.js";

type Family = "ip" | "ip6";

async function dump(s: NetfilterSocket, kind: DumpKind, family: Family, table: string, set?: string) {
  await s.send(dumpRequest(kind, family, table, 7, set));
  const p = newDumpProgress();
  while (!p.done) readDumpDatagram(p, parseMessages(s.receive()), table);
  if (p.errno !== 0 && p.errno !== 2) throw new Error(`dump ${kind}: errno ${p.errno}`);
  return p.objects;
}

const hex = (b: Buffer) => b.toString("hex");
const top = (m: NetlinkMessage) => parseAttributes(m.payload, 4);

function line(
  attrs: readonly Attribute[],
  skip: readonly number[],
  rename?: (a: Attribute) => string | undefined,
) {
  return attrs
    .filter((a) => !skip.includes(a.type))
    .map((a) => `${a.type}=${rename?.(a) ?? hex(a.value)}`)
    .join(" ");
}

/** Each expression as `name{type=hex ...}`, a set named by an anonymous set's stand-in. */
function expressions(value: Buffer, anon: Map<string, string>, where: string, used: string[]): string {
  return parseAttributes(value)
    .map((elem) => {
      const parts = parseAttributes(elem.value);
      const name = attrString(attr(parts, 1)) ?? "?";
      const data = parseAttributes(attr(parts, 2)?.value ?? Buffer.alloc(0));
      const body = data.map((a) => {
        // lookup and dynset name their set in attribute 1
        if ((name === "lookup" || name === "dynset") && a.type === 1) {
          const set = attrString(a) ?? "";
          if (anon.has(set)) {
            const stand = `anon(${where}#${used.length})`;
            used.push(set);
            anon.set(set, stand);
            return `1=${stand}`;
          }
        }
        return `${a.type}=${hex(a.value)}`;
      });
      return `${name}{${body.join(" ")}}`;
    })
    .join(" ");
}

function sortedElements(messages: readonly NetlinkMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    const list = attr(top(m), 3);
    for (const e of parseAttributes(list?.value ?? Buffer.alloc(0))) out.push(hex(e.value));
  }
  return out.sort();
}

/**
 * Lines describing the table: the table, chains, rules in chain order, sets with their sorted
 * elements. Equal lines for two tables mean the kernel holds the same thing in both.
 */
export async function tableState(netns: string, family: Family, table: string): Promise<string[]> {
  const s = await NetfilterSocket.open({ netns });
  try {
    const out: string[] = [];
    for (const m of await dump(s, "table", family, table)) out.push(`table ${line(top(m), [TABLE.HANDLE])}`);
    const chains = (await dump(s, "chain", family, table)).map(
      (m) => `chain ${line(top(m), [CHAIN.HANDLE])}`,
    );
    out.push(...chains.sort());
    const sets = await dump(s, "set", family, table);
    const anon = new Map<string, string>();
    for (const m of sets) {
      const attrs = top(m);
      const flags = attr(attrs, SET.FLAGS)?.value.readUInt32BE(0) ?? 0;
      if (flags & SET_FLAG.ANONYMOUS) anon.set(attrString(attr(attrs, SET.NAME)) ?? "", "");
    }
    const perChain = new Map<string, number>();
    for (const m of await dump(s, "rule", family, table)) {
      const attrs = top(m);
      const chain = attrString(attr(attrs, RULE.CHAIN)) ?? "";
      const n = perChain.get(chain) ?? 0;
      perChain.set(chain, n + 1);
      const used: string[] = [];
      const exprs = expressions(
        attr(attrs, RULE.EXPRESSIONS)?.value ?? Buffer.alloc(0),
        anon,
        `${chain}/${n}`,
        used,
      );
      out.push(`rule ${chain}#${n} ${line(attrs, [RULE.HANDLE, RULE.EXPRESSIONS, RULE.CHAIN])} ${exprs}`);
    }
    const setLines: string[] = [];
    for (const m of sets) {
      const attrs = top(m);
      const name = attrString(attr(attrs, SET.NAME)) ?? "";
      const stand = anon.get(name);
      const shown = line(attrs, [SET.HANDLE], (a) => (a.type === SET.NAME && stand ? stand : undefined));
      const elements = sortedElements(await dump(s, "element", family, table, name));
      setLines.push(`set ${shown}\n  ${elements.join("\n  ")}`);
    }
    out.push(...setLines.sort());
    return out;
  } finally {
    s.close();
  }
}

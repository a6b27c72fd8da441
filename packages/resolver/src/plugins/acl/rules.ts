import { type GoCIDR, parseGoCIDR } from "@switchyard/basics";
import type { Stanza } from "../../corefile/parse.js";
import { typeByName } from "../../plugin/pkg/mnemonics.js";
import { normalizeZoneArgs } from "../../plugin/pkg/zone-args.js";
import { stanzaError } from "../../plugin/setup.js";
import { normalizeZone } from "../../plugin/zones.js";

export type AclAction = "allow" | "block" | "filter" | "drop";

/** One policy line. `types` or `nets` undefined means every type or every source. */
export interface AclPolicy {
  action: AclAction;
  types: ReadonlySet<number> | undefined;
  nets: readonly GoCIDR[] | undefined;
}

/** One `acl` stanza: the zones it guards and its policies, tried in order. */
export interface AclRule {
  zones: readonly string[];
  policies: readonly AclPolicy[];
}

const ACTIONS = new Set<string>(["allow", "block", "filter", "drop"]);
const isSection = (token: string) => ["type", "net"].includes(token.toLowerCase());
const quote = (s: string) => JSON.stringify(s);

/** Every `acl` stanza of a server block; each one is its own rule, as upstream reads them. */
export function parseAclRules(stanzas: readonly Stanza[], blockZones: readonly string[]): AclRule[] {
  return stanzas.map((stanza) => ({
    zones: stanza.args.length > 0 ? normalizeZoneArgs(stanza.args) : blockZones.map(normalizeZone),
    policies: stanza.block.map(parsePolicy),
  }));
}

/** `ACTION [type QTYPE...] [net SOURCE...]`, sections in any order and repeatable. */
function parsePolicy(line: Stanza): AclPolicy {
  const fail = (message: string) => stanzaError(line, "acl", message);
  const action = line.name.toLowerCase();
  if (!ACTIONS.has(action))
    throw fail(`unexpected token ${quote(line.name)}; expect 'allow', 'block', 'filter' or 'drop'`);
  // caddy would read a brace on this line as one more token; none of the sections takes it.
  const tokens = line.blockEnd !== undefined ? [...line.args, "{"] : [...line.args];
  let types: Set<number> | undefined;
  let nets: GoCIDR[] | undefined;
  let allTypes = false;
  let allNets = false;
  while (tokens.length > 0) {
    const head = tokens.shift() as string;
    if (!isSection(head)) throw fail(`unexpected token ${quote(head)}; expect 'type | net'`);
    const section = head.toLowerCase();
    const values: string[] = [];
    while (tokens.length > 0 && !isSection(tokens[0] as string)) values.push(tokens.shift() as string);
    if (values.length === 0) throw fail(`no token specified in ${quote(section)} section`);
    if (section === "type") {
      types ??= new Set();
      for (const value of values) {
        // `*` ends the section: what follows it on the line is not looked at.
        if (value === "*") {
          allTypes = true;
          break;
        }
        const qtype = typeByName(value);
        if (qtype === undefined) throw fail(`unexpected token ${quote(value)}; expect legal QTYPE`);
        types.add(qtype);
      }
    } else {
      nets ??= [];
      for (const value of values) {
        if (value === "*") {
          allNets = true;
          break;
        }
        const text = withHostMask(value);
        const cidr = parseGoCIDR(text);
        if (!cidr) throw fail(`illegal CIDR notation ${quote(text)}`);
        nets.push(cidr);
      }
    }
  }
  return {
    action: action as AclAction,
    types: allTypes ? undefined : types,
    nets: allNets ? undefined : nets,
  };
}

/** A bare address stands for itself alone: `/128` when it has a colon, `/32` otherwise. */
function withHostMask(source: string): string {
  if (source.includes("/")) return source;
  return source.includes(":") ? `${source}/128` : `${source}/32`;
}

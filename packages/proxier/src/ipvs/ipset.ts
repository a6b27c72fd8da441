// kube-proxy's ipsets as `ipset restore` input. Sets are created with kube-proxy's
// parameters (hashsize 1024, maxelem 65536, ports 0-65535) and never destroyed while
// running: iptables rules reference them, and the kernel refuses to destroy a referenced set.
import type { IPFamily } from "@switchyard/basics";
import { IPSETS, type IPSetInfo, ipsetName } from "./names.js";

/** Members of each set, keyed by the set's base (IPv4) name. */
export type IPSetMembers = ReadonlyMap<string, ReadonlySet<string>>;

/** `create` arguments as kube-proxy passes them to `ipset create … -exist`. */
export function createLine(info: IPSetInfo, family: IPFamily): string {
  const name = ipsetName(info.name, family);
  if (info.type === "bitmap:port") return `create ${name} bitmap:port range 0-65535 -exist`;
  const inet = family === "IPv4" ? "inet" : "inet6";
  return `create ${name} ${info.type} family ${inet} hashsize 1024 maxelem 65536 -exist`;
}

function sorted(values: Iterable<string>): string[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Creates every set, empties it and fills it: the whole state in one program. */
export function ipsetFull(members: IPSetMembers, family: IPFamily): string {
  const lines: string[] = [];
  for (const info of IPSETS) {
    const name = ipsetName(info.name, family);
    lines.push(createLine(info, family), `flush ${name}`);
    for (const entry of sorted(members.get(info.name) ?? [])) lines.push(`add ${name} ${entry}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Ensures every set exists (cheap and idempotent, and repairs a deleted set), then deletes
 * and adds only the members that changed, as kube-proxy's per-set sync does.
 */
export function ipsetDiff(previous: IPSetMembers, next: IPSetMembers, family: IPFamily): string {
  const lines = IPSETS.map((info) => createLine(info, family));
  for (const info of IPSETS) {
    const name = ipsetName(info.name, family);
    const before = previous.get(info.name) ?? new Set<string>();
    const after = next.get(info.name) ?? new Set<string>();
    for (const entry of sorted(before)) if (!after.has(entry)) lines.push(`del ${name} ${entry}`);
    for (const entry of sorted(after)) if (!before.has(entry)) lines.push(`add ${name} ${entry}`);
  }
  return `${lines.join("\n")}\n`;
}

// The conntrack table through the conntrack CLI (conntrack-tools), run via the injected Exec
// so unit tests script it and kernel tests point it into a network namespace. Upstream talks
// netlink directly; the CLI gives the same list and the same per-flow deletes.

import type { IPFamily } from "@switchyard/basics";
import { type Exec, firstLine, realExec } from "../apply/exec.js";
import type { ConntrackFlow } from "./flow.js";
import { parseConntrackList } from "./flow.js";

export interface ConntrackResult {
  /** Entries deleted, or (expire) given the short timeout. */
  readonly deleted: number;
  readonly errors: readonly Error[];
}

/** What the reconciler needs from the table (upstream's conntrack.Interface). */
export interface ConntrackTable {
  /** The family's UDP entries (the only protocol the reconciler looks at); throws on failure. */
  listUDP(family: IPFamily): Promise<ConntrackFlow[]>;
  /** Deletes exactly these entries; failures are returned, not thrown. */
  delete(family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult>;
  /**
   * Gives every entry of these entries' groups (`deleteGroups`) `seconds` to live instead of deleting them: a datagram
   * already on its way through one (a new socket that got an old entry's port sends through it) still has its reply
   * translated back, and with no more traffic the kernel removes the entry itself. The filter cannot tell answered
   * entries from waiting ones: the caller passes only groups with none waiting (`expirableFlows`).
   */
  expire(family: IPFamily, flows: readonly ConntrackFlow[], seconds: number): Promise<ConntrackResult>;
}

/** conntrack lists IPv4 unless told otherwise. */
const familyArgs = (family: IPFamily): string[] => (family === "IPv6" ? ["-f", "ipv6"] : []);

export function conntrackListArgs(family: IPFamily): string[] {
  return [...familyArgs(family), "-L", "-p", "udp"];
}

/**
 * One delete for every flow from a service address and port to one stale endpoint: the four fields the
 * reconciler judges a flow by (orig dst and dport, reply src and sport), so every entry the filter matches is
 * stale by the same rule, while a flow re-created towards a serving endpoint since the listing (another reply
 * source) is left alone. Upstream deletes flow by flow over netlink in one batch; one process per flow would
 * cost a DNS Deployment's roll thousands of them (each lookup is its own UDP flow), and slow the syncs behind it.
 */
export function conntrackDeleteArgs(family: IPFamily, f: ConntrackFlow): string[] {
  return [...familyArgs(family), "-D", ...flowFilter(f)];
}

/**
 * The same filter for `conntrack -U` with the new timeout: conntrack lists the matching entries and updates each
 * one's timeout, not its tuples. No `--status`: for -U conntrack sets the bits given rather than matching them, so
 * `--status SEEN_REPLY` marked an entry still waiting for its reply as answered (seen in the kernel, 2026-12-05).
 */
export function conntrackExpireArgs(family: IPFamily, f: ConntrackFlow, seconds: number): string[] {
  return [...familyArgs(family), "-U", ...flowFilter(f), ...["--timeout", String(seconds)]];
}

function flowFilter(f: ConntrackFlow): string[] {
  return [
    "-p",
    f.protocol,
    "--orig-dst",
    f.orig.dst,
    "--dport",
    String(f.orig.dport),
    "--reply-src",
    f.reply.src,
    "--reply-port-src",
    String(f.reply.sport),
  ];
}

/** The flows that one `conntrackDeleteArgs` filter covers, one representative each. */
export function deleteGroups(flows: readonly ConntrackFlow[]): ConntrackFlow[] {
  const groups = new Map<string, ConntrackFlow>();
  for (const f of flows) {
    const key = `${f.protocol}#${f.orig.dst}#${f.orig.dport}#${f.reply.src}#${f.reply.sport}`;
    if (!groups.has(key)) groups.set(key, f);
  }
  return [...groups.values()];
}

/** The summary conntrack writes to stderr: "conntrack v1.4.7 (...): 1 flow entries have been deleted." */
const SUMMARY = /(\d+) flow entries have been (?:deleted|updated)/;

export class ConntrackCLI implements ConntrackTable {
  readonly #exec: Exec;

  constructor(exec: Exec = realExec) {
    this.#exec = exec;
  }

  /** An empty table is exit 0 with "0 flow entries have been shown." on stderr. */
  async listUDP(family: IPFamily): Promise<ConntrackFlow[]> {
    const args = conntrackListArgs(family);
    const r = await this.#exec("conntrack", args);
    if (r.code !== 0) throw new Error(`conntrack ${args.join(" ")}: ${firstLine(r.stderr)}`);
    return parseConntrackList(r.stdout);
  }

  /** One `conntrack -D` per group of flows (deleteGroups). */
  delete(family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult> {
    return this.#perGroup(flows, (f) => conntrackDeleteArgs(family, f));
  }

  /** One `conntrack -U` per group of flows (deleteGroups). */
  expire(family: IPFamily, flows: readonly ConntrackFlow[], seconds: number): Promise<ConntrackResult> {
    return this.#perGroup(flows, (f) => conntrackExpireArgs(family, f, seconds));
  }

  /**
   * Runs one command per group and adds up conntrack's summaries. Entries that expired since the listing make
   * conntrack exit 1 with "0 flow entries have been deleted" (or updated): nothing to do, so not an error.
   */
  async #perGroup(
    flows: readonly ConntrackFlow[],
    argsFor: (f: ConntrackFlow) => string[],
  ): Promise<ConntrackResult> {
    let deleted = 0;
    const errors: Error[] = [];
    for (const f of deleteGroups(flows)) {
      const args = argsFor(f);
      try {
        const r = await this.#exec("conntrack", args);
        const n = SUMMARY.exec(r.stderr);
        deleted += Number(n?.[1] ?? 0);
        if (r.code !== 0 && n === null) {
          errors.push(new Error(`conntrack ${args.join(" ")}: ${firstLine(r.stderr)}`));
        }
      } catch (e) {
        errors.push(e instanceof Error ? e : new Error(String(e)));
      }
    }
    return { deleted, errors };
  }
}

// The conntrack table through the conntrack CLI (conntrack-tools), run via the injected Exec
// so unit tests script it and kernel tests point it into a network namespace. Upstream talks
// netlink directly; the CLI gives the same list and the same per-flow deletes.
import { type Exec, firstLine, realExec } from "../apply/exec.js";
import type { IPFamily } from "../util/ip.js";
import type { ConntrackFlow } from "./flow.js";
import { parseConntrackList } from "./flow.js";

export interface ConntrackResult {
  readonly deleted: number;
  readonly errors: readonly Error[];
}

/** What the reconciler needs from the table (upstream's conntrack.Interface). */
export interface ConntrackTable {
  /** The family's UDP entries (the only protocol the reconciler looks at); throws on failure. */
  listUDP(family: IPFamily): Promise<ConntrackFlow[]>;
  /** Deletes exactly these entries; failures are returned, not thrown. */
  delete(family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult>;
}

/** conntrack lists IPv4 unless told otherwise. */
const familyArgs = (family: IPFamily): string[] => (family === "IPv6" ? ["-f", "ipv6"] : []);

export function conntrackListArgs(family: IPFamily): string[] {
  return [...familyArgs(family), "-L", "-p", "udp"];
}

/**
 * Matches one entry by both of its tuples, as upstream's flow filter does: matching the reply
 * too means a flow re-created towards a serving endpoint since the listing is left alone.
 */
export function conntrackDeleteArgs(family: IPFamily, f: ConntrackFlow): string[] {
  return [
    ...familyArgs(family),
    "-D",
    "-p",
    f.protocol,
    "--orig-src",
    f.orig.src,
    "--orig-dst",
    f.orig.dst,
    "--sport",
    String(f.orig.sport),
    "--dport",
    String(f.orig.dport),
    "--reply-src",
    f.reply.src,
    "--reply-dst",
    f.reply.dst,
    "--reply-port-src",
    String(f.reply.sport),
    "--reply-port-dst",
    String(f.reply.dport),
  ];
}

/** The summary conntrack writes to stderr: "conntrack v1.4.7 (...): 1 flow entries have been deleted." */
const DELETED = /(\d+) flow entries have been deleted/;

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

  /**
   * One `conntrack -D` per flow. An entry that expired since the listing makes conntrack
   * exit 1 with "0 flow entries have been deleted": nothing to do, so not an error.
   */
  async delete(family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult> {
    let deleted = 0;
    const errors: Error[] = [];
    for (const f of flows) {
      const args = conntrackDeleteArgs(family, f);
      try {
        const r = await this.#exec("conntrack", args);
        const n = DELETED.exec(r.stderr);
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

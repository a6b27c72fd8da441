// Deletes conntrack entries with the conntrack CLI (conntrack-tools), through the injected
// Exec. Deleting is best effort: a failure leaves a stale flow until its timeout, which is
// worth reporting but not worth failing the sync for.
import { type Exec, firstLine, realExec } from "../apply/exec.js";
import type { ConntrackFilter } from "./stale.js";

/** What conntrack prints when the filter matched nothing; not an error. */
const NOTHING_DELETED = "0 flow entries have been deleted";

/** The conntrack arguments for one filter. */
export function conntrackDeleteArgs(f: ConntrackFilter): string[] {
  const v6 = (f.origDst ?? f.dstNat ?? "").includes(":");
  const args = v6 ? ["-f", "ipv6", "-D"] : ["-D"];
  args.push("-p", f.protocol);
  if (f.origDst !== undefined) args.push("--orig-dst", f.origDst);
  if (f.origPort !== undefined) args.push("--dport", String(f.origPort));
  if (f.dstNat !== undefined) args.push("--dst-nat", f.dstNat);
  return args;
}

export interface ConntrackResult {
  readonly deleted: number;
  readonly errors: readonly Error[];
}

export class ConntrackCleaner {
  readonly #exec: Exec;

  constructor(exec: Exec = realExec) {
    this.#exec = exec;
  }

  /** Runs every filter; returns how many entries went and the failures. */
  async delete(filters: readonly ConntrackFilter[]): Promise<ConntrackResult> {
    let deleted = 0;
    const errors: Error[] = [];
    for (const f of filters) {
      const args = conntrackDeleteArgs(f);
      try {
        const r = await this.#exec("conntrack", args);
        const n = /(\d+) flow entries have been deleted/.exec(r.stderr + r.stdout);
        deleted += Number(n?.[1] ?? 0);
        if (r.code !== 0 && !r.stderr.includes(NOTHING_DELETED)) {
          errors.push(new Error(`conntrack ${args.join(" ")}: ${firstLine(r.stderr)}`));
        }
      } catch (e) {
        errors.push(e instanceof Error ? e : new Error(String(e)));
      }
    }
    return { deleted, errors };
  }
}

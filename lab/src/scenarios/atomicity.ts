import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Exec } from "../netns/exec.js";
import { runAt } from "./pod-run.js";

export interface AtomicityResult {
  rejected: boolean;
  error: string;
  unchanged: boolean;
  /** The same transaction without its broken last line applied (and was removed again). */
  controlApplied: boolean;
}

/**
 * C22: one `nft -f` transaction that creates a table, a chain and a rule, then ends with a rule jumping to a
 * chain that does not exist. The kernel must reject the whole of it: the ruleset listed before and after is
 * compared byte for byte. It runs in a scratch network namespace of its own (created and removed here), because
 * in a node's namespace the proxy's syncs and rule counters change the listing meanwhile. A control run without
 * the broken line shows the rest was valid.
 */
export async function nftAtomicity(exec: Exec, netns: string): Promise<AtomicityResult> {
  await exec(["ip", "netns", "add", netns]);
  try {
    return await check(exec, ["ip", "netns", "exec", netns]);
  } finally {
    await exec(["ip", "netns", "delete", netns]).catch(() => "");
  }
}

async function check(exec: Exec, at: readonly string[]): Promise<AtomicityResult> {
  const table = "switchyard-atomicity-check";
  const good = [
    `add table ip ${table}`,
    `add chain ip ${table} probe`,
    `add rule ip ${table} probe ip daddr 198.19.255.254 counter accept`,
  ];
  const dir = mkdtempSync(join(tmpdir(), "sy-atomic-"));
  try {
    const broken = join(dir, "broken.nft");
    const control = join(dir, "control.nft");
    writeFileSync(broken, [...good, `add rule ip ${table} probe jump no-such-chain`, ""].join("\n"));
    writeFileSync(control, [...good, ""].join("\n"));
    const before = await runAt(exec, at, ["nft", "list", "ruleset"]);
    const error = await exec([...at, "nft", "-f", broken]).then(
      () => "",
      (err: Error) => err.message.split(": ").slice(-2).join(": "),
    );
    const after = await runAt(exec, at, ["nft", "list", "ruleset"]);
    const applied = await exec([...at, "nft", "-f", control]).then(
      () => true,
      () => false,
    );
    if (applied) await runAt(exec, at, ["nft", "delete", "table", "ip", table]);
    return { rejected: error !== "", error, unchanged: before === after, controlApplied: applied };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

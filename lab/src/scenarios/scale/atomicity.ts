import type { Exec } from "../../exec.js";
import { runAt } from "../kit/pod-run.js";

export interface AtomicityResult {
  rejected: boolean;
  error: string;
  unchanged: boolean;
  /** The same transaction without its broken last line applied (and was removed again). */
  controlApplied: boolean;
}

/**
 * C22: one nft transaction that creates a table, a chain and a rule, then ends with a rule jumping to a chain that
 * does not exist. The kernel must reject the whole of it: the ruleset listed before and after is compared byte for
 * byte. It runs in a scratch network namespace of its own (created and removed here, through `host`: nothing on
 * netns, a node container on kind), because in a node's namespace the proxy's syncs and rule counters change the
 * listing meanwhile. A control run without the broken line shows the rest was valid. The commands go as one
 * argument (one invocation of nft is one batch, as `nft -f` is), so no file has to reach a node container.
 */
export async function nftAtomicity(
  exec: Exec,
  host: readonly string[],
  netns: string,
): Promise<AtomicityResult> {
  await exec([...host, "ip", "netns", "add", netns]);
  try {
    return await check(exec, [...host, "ip", "netns", "exec", netns]);
  } finally {
    await exec([...host, "ip", "netns", "delete", netns]).catch(() => "");
  }
}

async function check(exec: Exec, at: readonly string[]): Promise<AtomicityResult> {
  const table = "switchyard-atomicity-check";
  const good = [
    `add table ip ${table}`,
    `add chain ip ${table} probe`,
    `add rule ip ${table} probe ip daddr 198.19.255.254 counter accept`,
  ];
  const broken = [...good, `add rule ip ${table} probe jump no-such-chain`].join("; ");
  const before = await runAt(exec, at, ["nft", "list", "ruleset"]);
  const error = await exec([...at, "nft", broken]).then(
    () => "",
    (err: Error) => err.message.split(": ").slice(-2).join(": "),
  );
  const after = await runAt(exec, at, ["nft", "list", "ruleset"]);
  const applied = await exec([...at, "nft", good.join("; ")]).then(
    () => true,
    () => false,
  );
  if (applied) await runAt(exec, at, ["nft", "delete", "table", "ip", table]);
  return { rejected: error !== "", error, unchanged: before === after, controlApplied: applied };
}

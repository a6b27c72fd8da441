import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { readKindState } from "../kind/state.js";
import { defaultSettleMs, migrate } from "../migrate/migrate.js";
import { kindMigrateLab, kindWorkloadImages, migratableKindState } from "../migrate/migrate-lab.js";
import { formatReport } from "../migrate/report.js";
import { repoRoot } from "../self.js";
import { type ProxyMode, proxyModes } from "../stack/manifests.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { positiveIntFlag, UsageError } from "./usage.js";

/** A kind lab for migrate: its nodes through `docker exec`, the lab's images built and loaded on the way. */
async function kindLab(dir: string) {
  const cluster = migratableKindState(dir).input.name;
  const tools = await kindToolsOnThisMachine(process.stderr);
  const exec = spawnExec(kindPaths(dir).commandLog);
  return kindMigrateLab(
    dir,
    tools,
    kindWorkloadImages(exec, tools, cluster, repoRoot, kindPaths(dir).commandLog),
  );
}

async function runMigrate(inv: Invocation): Promise<number> {
  const to = inv.string("to") as ProxyMode | undefined;
  if (!to) throw new UsageError(`migrate: say which mode to switch to: --to ${proxyModes.join("|")}`);
  const nodes = inv.list("node");
  if (inv.bool("all") && nodes) throw new UsageError("migrate: --node and --all exclude each other");
  if (!inv.bool("all") && !nodes) throw new UsageError("migrate: name the nodes (--node NAME) or say --all");
  const settle = positiveIntFlag("migrate", "settle", inv.string("settle"));
  const dir = labDir(inv.string("state-dir"));
  const lab = readKindState(dir) ? await kindLab(dir) : undefined;
  const report = await migrate({
    stateDir: dir,
    ...(lab ? { lab } : {}),
    to,
    ...(nodes ? { nodes } : {}),
    ...(settle ? { settleMs: settle * 1000 } : {}),
  });
  console.log(formatReport(report));
  return report.switches.some((s) => s.leftovers > 0) ? 1 : 0;
}

export const migrateCommand: Command = {
  name: "migrate",
  group: "Lab",
  summary: "switch kube-proxy's mode node by node under live traffic, and report what it cost",
  description:
    "Switches kube-proxy's mode node by node under traffic (a traffic generator on every node), and prints a " +
    "report: failed connections and lookups per client node during each switch, sync time and rule counts " +
    "before and after, the old mode's leftover rules, and how long each switch took. Labelling a node is the " +
    "switch (a second kube-proxy DaemonSet per mode); migrating back is the rollback. Exits 1 when the old " +
    "mode left rules behind (for ebpf mode: programs attached to the node's cgroup, or pins). lab/README.md " +
    "(Migration) has the method.",
  synopsis: `--to ${proxyModes.join("|")} (--node NAME ... | --all) [flags]`,
  flags: [
    {
      name: "to",
      value: "MODE",
      choices: proxyModes,
      help: "the mode to switch to (required)",
    },
    { name: "node", value: "NAME", multiple: true, help: "a node to switch, in the order given" },
    { name: "all", help: "every node, one after the other" },
    {
      name: "settle",
      value: "SECONDS",
      default: String(defaultSettleMs / 1000),
      help: "how long to keep counting traffic after a node's switch",
    },
    labStateDirFlag,
  ],
  examples: [
    "# a canary: one node first",
    "sudo switchyard-lab migrate --to nftables --node node-1",
    "# then the rest",
    "sudo switchyard-lab migrate --to nftables --all",
    "# the rollback",
    "sudo switchyard-lab migrate --to iptables --node node-1",
    "# ebpf mode (socket-level balancing, not upstream's) on one node, then back",
    "sudo switchyard-lab migrate --to ebpf --node node-1",
    "sudo switchyard-lab migrate --to nftables --node node-1",
  ],
  run: runMigrate,
};

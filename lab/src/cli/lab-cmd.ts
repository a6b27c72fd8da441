import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { kindDown } from "../kind/lab-down.js";
import { kindKubeconfig, kindStatus } from "../kind/lab-status.js";
import { kindLabUp } from "../kind/lab-up.js";
import { kindLogsArgs } from "../kind/logs.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { machineFacts } from "../kind/probes.js";
import { isLabRuntime, type LabRuntime, labRuntimes, selectRuntime } from "../kind/select-runtime.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { readKindState } from "../kind/state.js";
import { kindUpSummary } from "../kind/summary.js";
import { withLabLock } from "../lock.js";
import { migrate } from "../migrate/migrate.js";
import { kindMigrateLab, kindWorkloadImages, migratableKindState } from "../migrate/migrate-lab.js";
import { formatReport } from "../migrate/report.js";
import { labDown } from "../netns/lab-down.js";
import { labStatus } from "../netns/lab-status.js";
import { labUp } from "../netns/lab-up.js";
import { defaultLabInput } from "../netns/plan.js";
import { defaultLabDir, labPaths, readLabRuntime, readLabState } from "../netns/state.js";
import { repoRoot } from "../self.js";
import {
  isProxyMode,
  isStackKind,
  type ProxyMode,
  proxyModes,
  type StackKind,
  stackKinds,
} from "../stack/manifests.js";
import { upSummary } from "./up-summary.js";
import { parseFlags, UsageError } from "./usage.js";

export const labHelp = `switchyard-lab up|down|status|kubeconfig|logs

up [--runtime netns|kind] [--nodes 3] [--zones 2] [--state-dir DIR] [--cluster-cidr 10.244.0.0/16]
   [--service-cidr 10.96.0.0/16] [--timeout SECONDS] [--proxy-mode iptables|nftables] [--no-stack]
   [--stack switchyard|upstream]
   netns only: [--prefix sy] [--node-cidr 198.18.0.0/24]
   kind only:  [--name switchyard] [--node-image kindest/node:<kubernetes version>]
                                         nodes, then Switchyard's stack from apps/<app>/deploy (--no-stack: nodes
                                         only; --stack upstream: kubeadm's kube-proxy and CoreDNS addons, kcm's
                                         slice controllers; on kind with Switchyard's images loaded to swap in)
down [--state-dir DIR] [--keep]          remove everything up created (--keep: keep logs and certificates)
status [--state-dir DIR]                 nodes (Ready?) and pods
kubeconfig [--state-dir DIR]             the admin kubeconfig's path
logs <component> [--state-dir DIR]       etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
                                         agent-node-<n> (netns), or <namespace>/<pod>[/<container>]

Runtimes: netns (nodes and pods are network namespaces; needs root on Linux) and kind (nodes are Docker
containers; needs a Docker engine and kubectl, no kind CLI: the nodes are made through testcontainers). Without
--runtime: netns where it works, else kind where \`docker info\` answers. --nodes counts the nodes that run
pods; kind adds its control-plane node. The state folder defaults to ${defaultLabDir()}.`;

const netnsOnlyFlags = ["prefix", "node-cidr"] as const;
const kindOnlyFlags = ["name", "node-image"] as const;

/** --runtime, or the default for this machine (see kind/select-runtime.ts); a one-line error when none works. */
async function chooseRuntime(flag: string | undefined): Promise<LabRuntime> {
  if (flag !== undefined) {
    if (!isLabRuntime(flag))
      throw new UsageError(`up: --runtime must be ${labRuntimes.join(" or ")}, got "${flag}"`);
    return flag;
  }
  const chosen = await selectRuntime(machineFacts());
  if ("error" in chosen) throw new Error(chosen.error);
  console.error(`switchyard-lab: runtime ${chosen.runtime} (the default here; --runtime chooses)`);
  return chosen.runtime;
}

const dirOf = (v: string | undefined) => v ?? defaultLabDir();

function positiveInt(cmd: string, flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${cmd}: --${flag} must be a positive integer, got "${value}"`);
  return n;
}

export async function labCommand(sub: string, rest: string[]): Promise<number> {
  const cmd = sub;
  if (sub === "up") {
    const { values } = parseFlags(cmd, rest, {
      runtime: { type: "string" },
      nodes: { type: "string" },
      zones: { type: "string" },
      "state-dir": { type: "string" },
      prefix: { type: "string" },
      "node-cidr": { type: "string" },
      "cluster-cidr": { type: "string" },
      "service-cidr": { type: "string" },
      timeout: { type: "string" },
      "proxy-mode": { type: "string" },
      "no-stack": { type: "boolean" },
      name: { type: "string" },
      "node-image": { type: "string" },
      stack: { type: "string" },
    });
    const proxyMode = values["proxy-mode"] ?? "iptables";
    if (!isProxyMode(proxyMode))
      throw new UsageError(`up: --proxy-mode must be ${proxyModes.join(" or ")}, got "${proxyMode}"`);
    const stackKind = values.stack ?? "switchyard";
    if (!isStackKind(stackKind))
      throw new UsageError(`up: --stack must be ${stackKinds.join(" or ")}, got "${stackKind}"`);
    if (values.stack !== undefined && values["no-stack"])
      throw new UsageError("up: --stack and --no-stack contradict each other; give one");
    const nodes = positiveInt(cmd, "nodes", values.nodes);
    const zones = positiveInt(cmd, "zones", values.zones);
    const timeout = positiveInt(cmd, "timeout", values.timeout);
    const runtime = await chooseRuntime(values.runtime);
    const foreign = runtime === "kind" ? netnsOnlyFlags : kindOnlyFlags;
    const misplaced = foreign.find((f) => values[f] !== undefined);
    if (misplaced) throw new UsageError(`up: --${misplaced} does not apply to the ${runtime} runtime`);
    const dir = dirOf(values["state-dir"]);
    const existing = readLabRuntime(dir);
    if (existing && existing !== runtime)
      throw new Error(
        `a ${existing} lab is up in ${dir}; run switchyard-lab down first, or pick another --state-dir`,
      );
    return withLabLock(dir, "up", () =>
      upOn(dir, runtime, values, { nodes, zones, timeout, proxyMode, stackKind }),
    );
  }
  if (sub === "down") {
    const { values } = parseFlags(cmd, rest, { "state-dir": { type: "string" }, keep: { type: "boolean" } });
    const dir = dirOf(values["state-dir"]);
    return withLabLock(dir, "down", () => downOn(dir, values.keep ?? false));
  }
  if (sub === "status") {
    const { values } = parseFlags(cmd, rest, { "state-dir": { type: "string" } });
    const dir = dirOf(values["state-dir"]);
    const status = readLabRuntime(dir) === "kind" ? await kindStatus(dir) : await labStatus(dir);
    console.log(status.text);
    return status.healthy ? 0 : 1;
  }
  if (sub === "kubeconfig") {
    const { values } = parseFlags(cmd, rest, { "state-dir": { type: "string" } });
    if (readLabRuntime(dirOf(values["state-dir"])) === "kind") {
      console.log(await kindKubeconfig(dirOf(values["state-dir"])));
      return 0;
    }
    const state = readLabState(dirOf(values["state-dir"]));
    if (!state?.kubeconfig) throw new Error(`no lab in ${dirOf(values["state-dir"])}; run switchyard-lab up`);
    console.log(state.kubeconfig);
    return 0;
  }
  if (sub === "logs") {
    const { values, positionals } = parseFlags(cmd, rest, { "state-dir": { type: "string" } });
    const [component] = positionals;
    if (!component) throw new UsageError("logs: name a component (see switchyard-lab up --help)");
    const kind = readKindState(dirOf(values["state-dir"]));
    if (kind) {
      const { kubectl } = await kindToolsOnThisMachine(process.stderr);
      const args = ["--kubeconfig", kind.kubeconfig, ...kindLogsArgs(component, kind.input.name)];
      return spawnSync(kubectl, args, { stdio: "inherit" }).status ?? 1;
    }
    process.stdout.write(readFileSync(logFile(dirOf(values["state-dir"]), component)));
    return 0;
  }
  throw new UsageError(`unknown command "${sub}"`);
}

interface UpFlags {
  name?: string;
  "node-image"?: string;
  "cluster-cidr"?: string;
  "service-cidr"?: string;
  prefix?: string;
  "node-cidr"?: string;
  "no-stack"?: boolean;
}

async function upOn(
  dir: string,
  runtime: LabRuntime,
  values: UpFlags,
  o: { nodes?: number; zones?: number; timeout?: number; proxyMode: ProxyMode; stackKind: StackKind },
): Promise<number> {
  const { nodes, zones, timeout, proxyMode } = o;
  if (runtime === "kind") {
    const state = await kindLabUp({
      stateDir: dir,
      input: {
        ...(nodes ? { nodes } : {}),
        ...(zones ? { zones } : {}),
        ...(values.name ? { name: values.name } : {}),
        ...(values["node-image"] ? { nodeImage: values["node-image"] } : {}),
        ...(values["cluster-cidr"] ? { clusterCidr: values["cluster-cidr"] } : {}),
        ...(values["service-cidr"] ? { serviceCidr: values["service-cidr"] } : {}),
      },
      ...(timeout ? { timeoutSeconds: timeout } : {}),
      ...(values["no-stack"] ? {} : { stack: proxyMode, stackKind: o.stackKind }),
    });
    console.log(kindUpSummary(state));
    return 0;
  }
  const state = await labUp({
    stateDir: dir,
    lab: {
      ...(nodes ? { nodes } : {}),
      ...(zones ? { zones } : {}),
      prefix: values.prefix ?? defaultLabInput.prefix,
      nodeCidr: values["node-cidr"] ?? defaultLabInput.nodeCidr,
      clusterCidr: values["cluster-cidr"] ?? defaultLabInput.clusterCidr,
      serviceCidr: values["service-cidr"] ?? defaultLabInput.serviceCidr,
    },
    ...(timeout ? { readyTimeoutMs: timeout * 1000 } : {}),
    ...(values["no-stack"] ? {} : { stack: proxyMode, stackKind: o.stackKind }),
  });
  console.log(upSummary(state));
  return 0;
}

async function downOn(dir: string, keep: boolean): Promise<number> {
  if (!existsSync(dir)) {
    console.log(`no lab in ${dir}`);
    return 0;
  }
  if (readLabRuntime(dir) === "kind") {
    for (const r of await kindDown(dir, { keepFiles: keep })) console.log(`removed ${r}`);
    return 0;
  }
  const result = await labDown(dir, { keepFiles: keep });
  for (const r of result.removed) console.log(`removed ${r}`);
  return 0;
}

/** A component's log: control-plane components and agents by name, pods' containers by namespace/pod[/container]. */
function logFile(dir: string, component: string): string {
  const paths = labPaths(dir);
  const candidates = [
    join(paths.logs, `${component}.log`),
    join(paths.controlPlane, "logs", `${component}.log`),
  ];
  const [ns, pod, container] = component.split("/");
  if (ns && pod && existsSync(paths.pods)) {
    const podDir = readdirSync(paths.pods).find((d) => d.startsWith(`${ns}_${pod}_`));
    if (podDir) {
      const logs = readdirSync(join(paths.pods, podDir)).filter((f) => f.endsWith(".log"));
      const file = container ? `${container}.log` : logs[0];
      if (file) candidates.push(join(paths.pods, podDir, file));
    }
  }
  const found = candidates.find((f) => existsSync(f));
  if (!found) throw new Error(`no log for "${component}" in ${dir}`);
  return found;
}

export const migrateHelp = `switchyard-lab migrate --to iptables|nftables [--node NAME | --all] [--settle 3] [--state-dir DIR]

Switches kube-proxy's mode node by node under traffic (a traffic generator on every node), and prints a report:
failed connections and lookups per client node during each switch, sync time and rule counts before and after,
the old mode's leftover rules, and how long each switch took. See lab/README.md (Migration) for the method.`;

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

export async function migrateCommand(rest: string[]): Promise<number> {
  const { values } = parseFlags("migrate", rest, {
    to: { type: "string" },
    node: { type: "string", multiple: true },
    all: { type: "boolean" },
    settle: { type: "string" },
    "state-dir": { type: "string" },
  });
  if (!values.to || !isProxyMode(values.to))
    throw new UsageError(`migrate: --to must be ${proxyModes.join(" or ")}`);
  if (values.all && values.node) throw new UsageError("migrate: --node and --all exclude each other");
  if (!values.all && !values.node) throw new UsageError("migrate: name the nodes (--node NAME) or say --all");
  const settle = positiveInt("migrate", "settle", values.settle);
  const dir = dirOf(values["state-dir"]);
  const kind = readKindState(dir);
  const lab = kind ? await kindLab(dir) : undefined;
  const report = await migrate({
    stateDir: dir,
    ...(lab ? { lab } : {}),
    to: values.to,
    ...(values.node ? { nodes: values.node } : {}),
    ...(settle ? { settleMs: settle * 1000 } : {}),
  });
  console.log(formatReport(report));
  return report.switches.some((s) => s.leftovers > 0) ? 1 : 0;
}

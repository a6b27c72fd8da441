import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { HttpRestClient } from "@switchyard/kube";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Node } from "kubernetes-types/core/v1.js";
import type { LoadStats } from "../agent/loadgen-stats.js";
import { labWorkloads } from "../kind/images.js";
import { loadImagesNodesLack } from "../kind/images-held.js";
import { kindCredentials } from "../kind/kubeconfig.js";
import { kindNodeContainers } from "../kind/lab-down.js";
import { loadImagesIntoNodes } from "../kind/load-images.js";
import { type KindLabState, readKindState } from "../kind/state.js";
import type { KindTools } from "../kind/tools.js";
import type { NodePlan } from "../netns/plan.js";
import { labPaths, readLabState } from "../netns/state.js";
import { loadgenStats, statsThroughApiserver } from "../scenarios/kit/workloads.js";
import type { LabEbpfPlaces } from "../stack/ebpf-places.js";
import { needOurStack } from "../stack/manifests.js";
import type { NodeBpf } from "../stack/proxy-measure.js";
import { trafficNamespace } from "./workload.js";

/** A node as the migration sees it: where its proxy's rules and metrics are read from. */
export interface MigrateNode {
  name: string;
  /** The address other nodes reach its NodePorts on. */
  ip: string;
  /** The argv prefix that runs a command in the node's network namespace (its rules, its loopback). */
  run: readonly string[];
  /** Whether the traffic generator runs there (kind's control-plane node takes no ordinary pods). */
  runsPods: boolean;
  /** Its cgroup and pin folder, where ebpf mode works (a netns lab's on the host, a kind node's inside it). */
  bpf?: NodeBpf;
}

/** What `migrate` needs from a lab, whatever its runtime. */
export interface MigrateLab {
  client: HttpRestClient;
  nodes: MigrateNode[];
  /** The traffic generators' counters per node. */
  trafficStats: () => Promise<Record<string, LoadStats>>;
  /** Only kind: the images the lab's own workloads need, into the nodes that lack them; says what it did. */
  loadImages?: () => Promise<string>;
  /** The nodes' cgroups and pin folders, which the proxy is given in every mode; none: no ebpf mode here. */
  ebpf?: LabEbpfPlaces;
  /** Why ebpf mode cannot run on this lab, in one line, when it cannot. */
  noEbpf?: string;
}

/** A netns lab's nodes as the migration sees them: each a network namespace, and each runs pods. */
export const netnsNodes = (nodes: readonly NodePlan[]): MigrateNode[] =>
  nodes.map((n) => ({
    name: n.name,
    ip: n.ip,
    run: ["ip", "netns", "exec", n.netns],
    runsPods: true,
    ...(n.cgroup && n.pinRoot ? { bpf: { cgroup: n.cgroup, pinRoot: n.pinRoot } } : {}),
  }));

/** A netns lab: nodes are network namespaces, the host reaches pod IPs. */
export function netnsMigrateLab(stateDir: string): MigrateLab {
  const state = readLabState(stateDir);
  if (!state?.server) throw new Error(`no lab in ${stateDir}; run switchyard-lab up`);
  needOurStack("migrate", state.stack);
  const client = labClient(adminCredentials(state.server, labPaths(stateDir).controlPlane));
  return {
    client,
    nodes: netnsNodes(state.plan.nodeList),
    trafficStats: () => loadgenStats(client, trafficNamespace),
    ...(state.plan.ebpf
      ? { ebpf: state.plan.ebpf }
      : {
          noEbpf:
            "this lab's nodes have no cgroups of their own (the host had no writable cgroup2 or no BPF file system at /sys/fs/bpf when it came up, or the lab is older); bring it up again",
        }),
  };
}

/** The kind lab in stateDir, when migrate can work on it; otherwise one line saying why not. */
export function migratableKindState(stateDir: string): KindLabState {
  const state = readKindState(stateDir);
  if (!state?.server)
    throw new Error(
      `no kind lab is up in ${stateDir} (its up did not finish); run switchyard-lab up --runtime kind`,
    );
  needOurStack("migrate", state.stack);
  return state;
}

/**
 * A kind lab: nodes are containers (`docker exec`), read from the Node objects; the host does not reach pod IPs,
 * so the counters come through the apiserver's pod proxy.
 */
export async function kindMigrateLab(
  stateDir: string,
  tools: KindTools,
  loadImages: () => Promise<string>,
): Promise<MigrateLab> {
  const state = migratableKindState(stateDir);
  const client = labClient(kindCredentials(readFileSync(state.kubeconfig, "utf8"), state.server));
  const nodes = await client.call<{ items: Node[] }>("GET", "/api/v1/nodes");
  const ebpf = state.ebpf;
  return {
    client,
    nodes: nodes.items.map((n) => {
      const run = [tools.docker, "exec", n.metadata?.name ?? ""];
      return {
        name: n.metadata?.name ?? "",
        ip: n.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? "",
        run,
        runsPods: !(n.spec?.taints ?? []).some((t) => t.effect === "NoSchedule"),
        // Each node's pins are on its own BPF file system: counted from inside it.
        ...(ebpf ? { bpf: { pinRoot: ebpf.pinRoot, pinsVia: run } } : {}),
      };
    }),
    trafficStats: () => loadgenStats(client, trafficNamespace, "loadgen", statsThroughApiserver(client)),
    loadImages,
    ...(ebpf ? { ebpf } : { noEbpf: kindNoEbpf }),
  };
}

/** Why a kind lab made before its nodes had ebpf mode's mounts (kind/ebpf-mounts.ts) cannot switch to it. */
export const kindNoEbpf =
  "this kind lab's nodes have no BPF file system or cgroup2 mount for the proxy (the lab is older than them); bring it up again";

/**
 * The lab's echo and traffic images into a kind lab's nodes, where a node lacks them (kind/images-held.ts): `up`
 * loaded them already, so usually nothing is built or loaded. What is missing from the engine is built from
 * lab/Dockerfile as `npm run images` builds ours (scripts/images.mjs: local bases where no registry answers); what
 * a node lacks is loaded, never pulled. Says what it did.
 */
export function kindWorkloadImages(
  exec: (argv: readonly string[]) => Promise<string>,
  tools: KindTools,
  cluster: string,
  repoRoot: string,
  log: string,
  load = (images: readonly string[], nodes: readonly string[]) =>
    loadImagesIntoNodes(tools.docker, images, nodes, log),
): () => Promise<string> {
  return async () => {
    const nodes = await kindNodeContainers(exec, tools.docker, cluster);
    const build = (images: readonly string[]) => {
      const apps = labWorkloads.filter((w) => images.includes(w.image)).map((w) => w.app);
      return exec([process.execPath, join(repoRoot, "scripts", "images.mjs"), ...apps]);
    };
    const images = labWorkloads.map((w) => w.image);
    return loadImagesNodesLack({ exec, docker: tools.docker, build, load }, images, nodes);
  };
}

import { join } from "node:path";
import { parseApiJson } from "@switchyard/kube";
import type { Node } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { familiesOf } from "../netns/plan.js";
import { writtenBy } from "../stack/deploy.js";
import type { KubeObject, ProxyMode, StackKind } from "../stack/manifests.js";
import { parseSyncStats, proxyMetricsGet } from "../stack/proxy-measure.js";
import { kindEbpfMountScript } from "./ebpf-mounts.js";
import { type AppImage, labWorkloads } from "./images.js";
import { controllersWithoutSlices } from "./kubeadm-config.js";
import { renderManifests, replacedKubeadmObjects } from "./manifests.js";
import { type KindLabInput, kindNodes } from "./options.js";
import type { KindPaths } from "./paths.js";
import { type PodNetworkNode, podNetworkNodes, podNetworkScript } from "./pod-network.js";
import type { KindClusterSpec } from "./provision.js";
import type { KindTools } from "./tools.js";

/** The phases of a kind `up`, in order; progress reports them. */
export type KindPhase = "images" | "cluster" | "load" | "nodes" | "stack";

interface StepBase {
  phase: KindPhase;
  /** What the step does, for progress and errors: "docker build of kube-proxy". */
  what: string;
}
/** Runs a command; a failure stops `up`. */
export interface RunStep extends StepBase {
  run: string[];
}
/** Writes a file the next commands read (the manifests). */
export interface WriteStep extends StepBase {
  write: { path: string; content: string };
}
/** Creates the cluster (provision.ts: node containers through testcontainers, kubeadm init and join). */
export interface ProvisionStep extends StepBase {
  /** From this step on there is a cluster to remove when `up` fails. */
  provision: KindClusterSpec;
}
/** Loads images from the engine into every node's containerd (load-images.ts). */
export interface LoadStep extends StepBase {
  load: { images: string[]; nodes: string[] };
}
/** Runs a command until `until` accepts its output; its string answers say what is still missing. */
export interface PollStep extends StepBase {
  poll: string[];
  until: (stdout: string) => true | string;
  /** Steps made from the accepted output, run next (commands that need what the cluster says). */
  followedBy?: (stdout: string) => KindStep[];
}
/**
 * Lanes that run at once, each in order, where nothing orders one lane after another; the group ends when every
 * lane has. Its phase and `what` name the group in the plan; its lanes' steps are timed and reported one by one.
 */
export interface ParallelStep extends StepBase {
  together: KindStep[][];
}
export type KindStep = RunStep | WriteStep | PollStep | ProvisionStep | LoadStep | ParallelStep;

/** A group of lanes, or the one lane's steps themselves when only one lane has any. */
function together(phase: KindPhase, what: string, lanes: KindStep[][]): KindStep[] {
  const busy = lanes.filter((lane) => lane.length > 0);
  return busy.length > 1 ? [{ phase, what, together: busy }] : (busy[0] ?? []);
}

/** Each step its own lane. */
const eachAtOnce = (phase: KindPhase, what: string, steps: KindStep[]) =>
  together(
    phase,
    what,
    steps.map((s) => [s]),
  );

export interface KindUpPlan {
  input: KindLabInput;
  paths: KindPaths;
  tools: KindTools;
  /** The repository root: every Dockerfile's build context. */
  repoRoot: string;
  /** The Node that runs scripts/images.mjs (the project's: this process's). */
  node: string;
  /** Seconds each wait may take (kubectl's --timeout). */
  timeoutSeconds: number;
  /** Leave the nodes to Ryuk when the process ends (tests); `up` from the command line never does. */
  reap?: boolean;
  /**
   * The stack; absent with --no-stack. Switchyard's comes as objects (already edited for kind, in apply order) and
   * the images they run. Upstream's is kubeadm's own; Switchyard's images are loaded all the same (also as
   * `switchyard/<app>:dev`), so that swapping one in is a `kubectl set image`.
   */
  stack?: {
    kind: StackKind;
    proxyMode: ProxyMode;
    /** kube-proxy's objects (apps/kube-proxy/deploy), applied and synced before the rest. */
    proxy: readonly KubeObject[];
    /** The slice controller's and cluster DNS's. */
    rest: readonly KubeObject[];
    images: readonly AppImage[];
  };
}

/**
 * scripts/images.mjs builds as `npm run images` does: the Dockerfiles' base images where they can be pulled, local
 * ones made from Debian packages where no registry answers. It tags <version> and dev; the manifests' reference is
 * tagged too, so a manifest edited to another tag still finds its image. With a stack, the lab's own workloads too
 * (switchyard/echo and switchyard/loadgen, lab/Dockerfile): no registry has them, and the workshop's first
 * Deployment runs echo.
 */
function imageSteps(
  p: KindUpPlan,
  images: readonly AppImage[],
  workloads: readonly { app: string }[],
): KindStep[] {
  if (images.length === 0) return [];
  const apps = [...images.map((i) => i.app), ...workloads.map((w) => w.app)];
  return [
    {
      phase: "images",
      what: `building ${apps.join(", ")} (scripts/images.mjs)`,
      run: [p.node, join(p.repoRoot, "scripts", "images.mjs"), ...apps],
    },
    ...images.map((img) => ({
      phase: "images" as const,
      what: `tagging ${img.image}`,
      run: [p.tools.docker, "tag", `switchyard/${img.app}:dev`, img.image],
    })),
  ];
}

/**
 * Everything `up --runtime kind` does, as data. Our images are built while the cluster is created (neither needs the
 * other; a broken Dockerfile still stops `up`, and the cluster made meanwhile is removed); they are loaded into the
 * nodes (kind load), never pushed or pulled, while the nodes become Ready. Every wait waits for what it did when the
 * steps ran one by one; only the order of waiting went.
 */
export function kindUpSteps(p: KindUpPlan): KindStep[] {
  const { input, paths, tools } = p;
  const kubectl = [tools.kubectl, "--kubeconfig", paths.kubeconfig];
  const timeout = `--timeout=${p.timeoutSeconds}s`;
  const images = p.stack?.images ?? [];
  const workloads = images.length > 0 ? labWorkloads : [];
  const upstream = p.stack?.kind === "upstream";
  const cluster: KindStep[] = [
    {
      phase: "cluster",
      what: `creating cluster ${input.name}: ${kindNodes(input).length} node containers, kubeadm init and join`,
      provision: {
        cluster: {
          name: input.name,
          ipFamily: input.ipFamily ?? "ipv4",
          podSubnet: input.clusterCidr,
          serviceSubnet: input.serviceCidr,
          // Switchyard's stack: no kube-proxy from kubeadm (ours is applied) and no upstream slice controllers.
          kubeProxyMode: upstream ? (p.stack?.proxyMode ?? "iptables") : "none",
          ...(upstream ? {} : { controllers: controllersWithoutSlices }),
        },
        nodes: kindNodes(input),
        image: input.nodeImage,
        reap: p.reap ?? false,
        kubeconfig: paths.kubeconfig,
        logDir: join(paths.logs, "kubeadm"),
      },
    },
    // Before any of our pods starts: the proxy's DaemonSet binds them in every mode (ebpf-mounts.ts).
    ...eachAtOnce(
      "cluster",
      "BPF file system and cgroup2 mounts",
      kindNodes(input).map((node) => ({
        phase: "cluster",
        what: `BPF file system and cgroup2 mount on ${node.name}`,
        run: [tools.docker, "exec", node.name, "sh", "-c", kindEbpfMountScript()],
      })),
    ),
    podNetworkStep(p, kubectl),
  ];
  const steps = together("cluster", "images built while the cluster is created", [
    imageSteps(p, images, workloads),
    cluster,
  ]);
  // One archive of every image, imported into the nodes at once: one save and one import per node in all.
  const names = [
    ...images.flatMap((img) => (upstream ? [img.image, `switchyard/${img.app}:dev`] : [img.image])),
    ...workloads.map((w) => w.image),
  ];
  const load: KindStep[] =
    names.length > 0
      ? [
          {
            phase: "load",
            what: `loading ${names.length} images into the nodes`,
            load: { images: names, nodes: kindNodes(input).map((n) => n.name) },
          },
        ]
      : [];
  const ready: KindStep = {
    phase: "nodes",
    what: "nodes Ready",
    run: [...kubectl, "wait", "--for=condition=Ready", "nodes", "--all", timeout],
  };
  // The stack's pods find the images when they start: the stack is applied after both.
  steps.push(...together("nodes", "images loaded while the nodes become Ready", [load, [ready]]));
  if (!p.stack) return steps;
  if (upstream) return [...steps, ...upstreamStackSteps(kubectl, timeout, tools.docker, kindNodes(input))];
  return [...steps, ...switchyardStackSteps(p, p.stack, kubectl, timeout)];
}

/**
 * Switchyard's stack in place of kubeadm's: kube-proxy first, and the rest once every node's proxy has synced
 * (stack/deploy.ts says why: a pod dialling a ClusterIP before its node has the rule hangs until its client gives
 * up); the rest's waits all at once.
 */
function switchyardStackSteps(
  p: KindUpPlan,
  stack: NonNullable<KindUpPlan["stack"]>,
  kubectl: string[],
  timeout: string,
): KindStep[] {
  const { paths } = p;
  const steps: KindStep[] = replacedKubeadmObjects.map((o) => ({
    phase: "stack",
    what: `removing kubeadm's ${o.kind}/${o.name}`,
    run: [...kubectl, "-n", o.namespace, "delete", o.kind, o.name, "--ignore-not-found", "--wait=true"],
  }));
  const apply = (what: string, path: string): KindStep => ({
    phase: "stack",
    what,
    run: [
      ...kubectl,
      "apply",
      "--server-side",
      "--force-conflicts",
      "--field-manager=switchyard-lab",
      "-f",
      path,
    ],
  });
  const { proxy, rest } = stack;
  steps.push(
    {
      phase: "stack",
      what: "writing the stack's manifests",
      write: { path: paths.proxyManifests, content: renderManifests(proxy) },
    },
    {
      phase: "stack",
      what: "writing the stack's manifests",
      write: { path: paths.manifests, content: renderManifests([...proxy, ...rest]) },
    },
    apply(`applying ${proxy.length} objects from apps/kube-proxy/deploy`, paths.proxyManifests),
    ...eachAtOnce("stack", "kube-proxy synced on every node", [
      ...rolledOut(kubectl, timeout, proxy),
      ...kindNodes(p.input).map((n) => proxySynced(p.tools.docker, n.name)),
    ]),
    apply(`applying the rest of the stack (${rest.length} objects)`, paths.manifests),
  );
  const sliced: KindStep = {
    phase: "stack",
    what: "kube-dns endpoints in a slice our controller wrote",
    // managedFields are what tell our controller's slices apart; kubectl hides them unless asked.
    poll: [
      ...[...kubectl, "-n", "kube-system", "get", "endpointslices"],
      ...["-l", "kubernetes.io/service-name=kube-dns", "-o", "json", "--show-managed-fields"],
    ],
    until: kubeDnsSliced,
  };
  steps.push(
    ...eachAtOnce("stack", "the stack's workloads and kube-dns", [
      ...rolledOut(kubectl, timeout, rest),
      sliced,
    ]),
  );
  return steps;
}

/** `kubectl rollout status` for each DaemonSet and Deployment among the objects. */
function rolledOut(kubectl: string[], timeout: string, objects: readonly KubeObject[]): KindStep[] {
  return objects
    .filter((o) => o.kind === "DaemonSet" || o.kind === "Deployment")
    .map((o) => ({
      phase: "stack",
      what: `${o.kind.toLowerCase()}/${o.metadata.name} rolled out`,
      run: [
        ...[...kubectl, "-n", o.metadata.namespace ?? "default", "rollout", "status"],
        ...[`${o.kind.toLowerCase()}/${o.metadata.name}`, timeout],
      ],
    }));
}

/**
 * A node's proxy has synced once, from its metrics. A proxy without a readiness probe is "rolled out" once
 * started; until its first sync, a pod's first packet to a ClusterIP leaves un-NATed, and its conntrack entry keeps
 * the retries from the same socket un-NATed too.
 */
function proxySynced(docker: string, node: string): KindStep {
  return {
    phase: "stack",
    what: `kube-proxy on ${node} synced`,
    poll: proxyMetricsGet([docker, "exec", node], "/metrics"),
    until: (stdout: string) => (parseSyncStats(stdout).count > 0 ? true : "no sync yet"),
  };
}

/** Every node's podCIDRs and addresses (one of each per family), then each node's pod network from them (pod-network.ts), all at once. */
function podNetworkStep(p: KindUpPlan, kubectl: string[]): KindStep {
  const nodesJson = [...kubectl, "get", "nodes", "-o", "json"];
  const network = (stdout: string) =>
    podNetworkNodes(
      (parseApiJson(stdout) as { items: Node[] }).items,
      kindNodes(p.input).length,
      familiesOf(p.input.ipFamily ?? "ipv4").length,
    );
  return {
    phase: "nodes",
    what: "every node's podCIDR and address",
    poll: nodesJson,
    until: (stdout) => {
      const nodes = network(stdout);
      return typeof nodes === "string" ? nodes : true;
    },
    followedBy: (stdout) => {
      const nodes = network(stdout) as PodNetworkNode[];
      return eachAtOnce(
        "nodes",
        "pod networks",
        nodes.map((node) => ({
          phase: "nodes" as const,
          what: `pod network on ${node.name}`,
          run: [p.tools.docker, "exec", node.name, "sh", "-c", podNetworkScript(node, nodes)],
        })),
      );
    },
  };
}

/**
 * Upstream's stack is what kubeadm installed (kind's kube-proxy addon, kubeadm's CoreDNS, kube-controller-manager's
 * EndpointSlice controllers): nothing to apply, only to wait for, the same way as for ours.
 */
function upstreamStackSteps(
  kubectl: string[],
  timeout: string,
  docker: string,
  nodes: readonly { name: string }[],
): KindStep[] {
  return eachAtOnce("stack", "upstream's workloads, proxies and kube-dns", [
    ...["daemonset/kube-proxy", "deployment/coredns"].map((workload) => ({
      phase: "stack" as const,
      what: `${workload} rolled out`,
      run: [...kubectl, "-n", "kube-system", "rollout", "status", workload, timeout],
    })),
    ...nodes.map((n) => proxySynced(docker, n.name)),
    {
      phase: "stack",
      what: "kube-dns endpoints in a slice kube-controller-manager wrote",
      poll: [
        ...[...kubectl, "-n", "kube-system", "get", "endpointslices"],
        ...["-l", "kubernetes.io/service-name=kube-dns", "-o", "json", "--show-managed-fields"],
      ],
      until: (stdout: string) => kubeDnsSliced(stdout, "upstream"),
    },
  ]);
}

/** True once kube-dns has a ready endpoint in a slice written by the stack's EndpointSlice controller. */
export function kubeDnsSliced(stdout: string, by: StackKind = "switchyard"): true | string {
  const theirs = (parseApiJson(stdout) as { items: EndpointSlice[] }).items.filter(writtenBy(by));
  const ready = theirs.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
  const whose = by === "upstream" ? "kube-controller-manager's" : "ours";
  return ready > 0 ? true : `${theirs.length} slices of ${whose}, no ready endpoint`;
}

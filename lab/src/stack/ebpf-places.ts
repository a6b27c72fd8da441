import { labBPFRoot, nodeBPFRoot } from "./bpf-root.js";

/**
 * ebpf mode in a lab. The proxy's socket programs serve the processes of one cgroup2 directory, and every lab node
 * shares this machine's kernel, so each node gets a directory of its own that holds every process its agent
 * starts (its pods), and a pin folder of its own on the BPF file system; a node's proxy attaches there and
 * pins there, and never touches another node's sockets or maps. What is here is the paths and the DaemonSet's
 * edits that let the proxy's container reach them; the netns runtime makes and removes the folders. These are a
 * netns lab's places; a kind lab's are below (KindEbpfPlaces).
 */
export interface EbpfPlaces {
  /** The host's cgroup2 mount: /sys/fs/cgroup/unified on a hybrid host, /sys/fs/cgroup on a cgroup2-only one. */
  cgroup2Mount: string;
  /** The lab's prefix: its folder is switchyard/<prefix> below the cgroup2 mount, and below the BPF file system. */
  prefix: string;
}

/** Where the BPF file system is mounted, on the host and in the proxy's container alike. */
export const bpffsMount = "/sys/fs/bpf";
/** Where the proxy's container sees the node's cgroup2 hierarchy (as a cgroup2-only host shows it). */
const containerCgroup2 = "/sys/fs/cgroup";

export const ebpfPlaces = (cgroup2Mount: string, prefix: string): EbpfPlaces => ({ cgroup2Mount, prefix });

/** The lab's folder below a cgroup2 mount (the host's, or the proxy container's view of it). */
const cgroupPath = (p: EbpfPlaces) => `switchyard/${p.prefix}`;
/** The lab's cgroup2 directory on the host; each node's is below it. */
export const labCgroup = (p: EbpfPlaces) => `${p.cgroup2Mount}/${cgroupPath(p)}`;
export const nodeCgroup = (p: EbpfPlaces, node: string) => `${labCgroup(p)}/${node}`;
/** The lab's pin folder on the host (bpf-root.ts); each node's proxy pins below it (--bpf-root). */
export const labPinDir = (p: EbpfPlaces) => labBPFRoot(p.prefix);
export const nodePinRoot = (p: EbpfPlaces, node: string) => nodeBPFRoot(p.prefix, node);

/**
 * The leaf below a node's cgroup2 directory that holds the node's own processes (its agent, and what the lab runs
 * as the node); its pods have directories beside it (agent/pod-cgroups.ts). The node's directory holds none itself,
 * as cgroup2 requires of a directory that passes controllers down to its children.
 */
export const nodeSystemCgroup = (nodeCgroup: string) => `${nodeCgroup}/system`;

/**
 * The argv prefix that runs a command as one of the node's processes: it joins the node's system leaf, then
 * execs. A probe the lab makes into a pod (`ip netns exec`) must run so, or ebpf mode would not see its
 * connections.
 */
export const inCgroup = (cgroup: string): string[] => [
  "sh",
  "-c",
  'mkdir -p "$0" && echo $$ > "$0/cgroup.procs" && exec "$@"',
  nodeSystemCgroup(cgroup),
];

/**
 * A kind lab's places: every node is a container with a BPF file system of its own at /sys/fs/bpf and a cgroup2
 * mount made inside its own cgroup namespace, whose root is the node container's cgroup (kind/ebpf-mounts.ts
 * makes both). Every node has them at the same paths, and nothing of one node is seen from another.
 */
export interface KindEbpfPlaces {
  runtime: "kind";
  /** The cgroup2 mount inside each node: its root holds the node's every process (its pods, its own). */
  nodeCgroup2: string;
  /** Where each node's proxy pins, on the node's own BPF file system (--bpf-root). */
  pinRoot: string;
}

/** The places of either runtime: what the proxy's DaemonSet is given in every mode. */
export type LabEbpfPlaces = EbpfPlaces | KindEbpfPlaces;

const isKind = (p: LabEbpfPlaces): p is KindEbpfPlaces => "runtime" in p && p.runtime === "kind";

/** What the proxy's pod is given: the node's cgroup2 directory and where below it to attach, and where to pin. */
interface ProxyAccess {
  /** The node's directory the container sees at /sys/fs/cgroup. */
  cgroup2: string;
  /** --cgroup-root, in the container. */
  cgroupRoot: string;
  /** --bpf-root, the same path in the node and the container. */
  bpfRoot: string;
  /**
   * The node's PID namespace: a kind node's processes are in the node container's own, which a pod does not see
   * without it; the socket-destroy iterator finds the sockets' network namespaces through their processes.
   */
  hostPID: boolean;
}

function proxyAccess(p: LabEbpfPlaces): ProxyAccess {
  if (isKind(p))
    return { cgroup2: p.nodeCgroup2, cgroupRoot: containerCgroup2, bpfRoot: p.pinRoot, hostPID: true };
  return {
    cgroup2: p.cgroup2Mount,
    cgroupRoot: `${containerCgroup2}/${cgroupPath(p)}/$(NODE_NAME)`,
    // The container sees the host's BPF file system where the host does, so the pin root is the same path.
    bpfRoot: nodePinRoot(p, "$(NODE_NAME)"),
    // A netns lab's agent starts the proxy in the host's PID namespace already.
    hostPID: false,
  };
}

interface ProxyPodSpec {
  hostPID?: boolean;
  containers: { name: string; command?: string[]; volumeMounts?: { name: string; mountPath: string }[] }[];
  volumes?: { name: string; hostPath?: { path: string; type?: string } }[];
}

/**
 * The kube-proxy DaemonSet of a lab whose nodes have these places, in every mode: ebpf mode attaches to the
 * node's cgroup and pins under the node's folder, and any other mode removes that folder after its first sync,
 * so a node that leaves ebpf mode is left with no program attached. The container gets the node's BPF file
 * system and cgroup2 hierarchy as hostPath volumes (a pod's own /sys has neither); `$(NODE_NAME)` is the node.
 */
export function withEbpfPlaces<T extends object>(ds: T, p: LabEbpfPlaces): T {
  const out = structuredClone(ds);
  const pod = (out as { spec?: { template: { spec: ProxyPodSpec } } }).spec?.template.spec;
  if (!pod) throw new Error("the kube-proxy DaemonSet has no pod template");
  const proxy = pod.containers.find((c) => c.name === "kube-proxy");
  if (!proxy?.command) throw new Error("the kube-proxy DaemonSet has no kube-proxy container with a command");
  const access = proxyAccess(p);
  proxy.command.push(`--cgroup-root=${access.cgroupRoot}`, `--bpf-root=${access.bpfRoot}`);
  proxy.volumeMounts = [
    ...(proxy.volumeMounts ?? []),
    { name: "bpf-maps", mountPath: bpffsMount },
    { name: "cgroup2", mountPath: containerCgroup2 },
  ];
  pod.volumes = [
    ...(pod.volumes ?? []),
    { name: "bpf-maps", hostPath: { path: bpffsMount, type: "Directory" } },
    { name: "cgroup2", hostPath: { path: access.cgroup2, type: "Directory" } },
  ];
  if (access.hostPID) pod.hostPID = true;
  return out;
}

/** mountinfo's octal escapes (a space is \040) back to characters. */
const unescapeOctal = (path: string) =>
  path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/**
 * From this machine's /proc/self/mountinfo: the cgroup2 mount, and whether the BPF file system is at /sys/fs/bpf.
 * Both are needed for ebpf mode; `missing` says in one line what is not there.
 */
export function ebpfMounts(mountinfo: string): { cgroup2Mount?: string; missing?: string } {
  const mounts = mountinfo
    .split("\n")
    .map((line) => ({
      point: unescapeOctal(line.split(" ")[4] ?? ""),
      type: line.split(" - ")[1]?.split(" ")[0],
    }))
    .filter((m) => m.point && m.type);
  const cgroup2 = mounts.find((m) => m.type === "cgroup2")?.point;
  const bpffs = mounts.some((m) => m.point === bpffsMount && m.type === "bpf");
  const missing = [
    ...(cgroup2 ? [] : ["no cgroup2 file system is mounted"]),
    ...(bpffs ? [] : [`no BPF file system at ${bpffsMount} (mount -t bpf bpf ${bpffsMount})`]),
  ];
  return {
    ...(cgroup2 ? { cgroup2Mount: cgroup2 } : {}),
    ...(missing.length ? { missing: missing.join("; ") } : {}),
  };
}

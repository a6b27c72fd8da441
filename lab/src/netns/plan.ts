import { cidrList, cidrRange, type IPFamily as Family, familyOf, nth } from "@switchyard/basics";
import { type EbpfPlaces, ebpfPlaces, nodeCgroup, nodePinRoot } from "../stack/ebpf-places.js";
import { type LimitMounts, labLimitDir } from "./limit-places.js";

/**
 * The lab's shape as data: names and addresses of the bridge, the nodes and their namespaces. Everything the
 * runtime creates is derived from this, so `down`, `status` and tests agree with `up` by construction.
 */
/** The cluster's address families, as kind's `networking.ipFamily` names them; dual is IPv4 first (primary). */
export type IpFamily = "ipv4" | "ipv6" | "dual";
export const ipFamilies: readonly IpFamily[] = ["ipv4", "ipv6", "dual"];

export interface LabInput {
  /** Prefix of every kernel object's name; two labs on one host need different prefixes and networks. */
  prefix: string;
  nodes: number;
  zones: number;
  /** Absent in labs made before IPv6 could be chosen: ipv4. */
  ipFamily?: IpFamily;
  /**
   * The node network: the bridge takes the first address, node n takes address 10 + n. This and the two below hold
   * one CIDR per family, comma-separated, the primary first (a dual-stack control plane takes its ranges so).
   */
  nodeCidr: string;
  clusterCidr: string;
  serviceCidr: string;
}

/** One family's share of the node network. */
export interface FamilyNetwork {
  family: Family;
  nodeCidr: string;
  prefixLength: number;
  /** The bridge's address in this family. */
  gateway: string;
}

export interface NodePlan {
  index: number;
  /** The Node object's name and the kubernetes.io/hostname label. */
  name: string;
  zone: string;
  netns: string;
  /** The root-namespace end of the node's veth, enslaved to the lab bridge. */
  hostVeth: string;
  /** The primary family's address. */
  ip: string;
  /** One address per family, the primary first (the Node's InternalIPs). */
  ips: string[];
  /**
   * The node's cgroup2 directory on the host, holding every process its agent starts (its pods): what ebpf mode
   * balances. Absent where the host had no cgroup2 and BPF file system when the lab came up (and in older labs).
   */
  cgroup?: string;
  /** Where the node's proxy pins its programs' links and maps in ebpf mode (--bpf-root); with `cgroup`. */
  pinRoot?: string;
  /**
   * The node's folders in the hierarchies with the memory and cpu controllers, where its pods' limits go
   * (agent/pod-cgroups.ts): `cgroup` itself on a cgroup2-only host, v1 ones on a hybrid host. Absent without
   * `cgroup`, on a host with neither, and in older labs: pods then run without limits.
   */
  limits?: { memory: string; cpu: string };
}

export interface LabPlan extends LabInput {
  bridge: string;
  /** The bridge's address in the primary family: the node network's gateway and where kube-apiserver listens. */
  gateway: string;
  prefixLength: number;
  /** Per family, the primary first. */
  networks: FamilyNetwork[];
  /** The kube-dns Service's ClusterIP, written into every pod's resolv.conf (the tenth service address). */
  dnsIp: string;
  nodeList: NodePlan[];
  /** The lab's cgroup2 and pin folders (switchyard/<prefix> under each), when the host has both file systems. */
  ebpf?: EbpfPlaces;
  /** The lab's folders in cgroup v1's memory and cpu hierarchies, on a hybrid host (limit-places.ts). */
  v1Limits?: { memory: string; cpu: string };
}

type Networks = Pick<LabInput, "nodeCidr" | "clusterCidr" | "serviceCidr">;
const ipv4Networks: Networks = {
  nodeCidr: "198.18.0.0/24",
  clusterCidr: "10.244.0.0/16",
  serviceCidr: "10.96.0.0/16",
};
/** kind's IPv6 pod and service ranges; the node network is a ULA /64 named after the IPv4 one. */
const ipv6Networks: Networks = {
  nodeCidr: "fd00:198:18::/64",
  clusterCidr: "fd00:10:244::/56",
  serviceCidr: "fd00:10:96::/112",
};

/** The ranges `up` uses for each --ip-family when none is given. */
export function networksFor(family: IpFamily): Networks {
  if (family === "ipv4") return ipv4Networks;
  if (family === "ipv6") return ipv6Networks;
  const both = (k: keyof Networks) => `${ipv4Networks[k]},${ipv6Networks[k]}`;
  return { nodeCidr: both("nodeCidr"), clusterCidr: both("clusterCidr"), serviceCidr: both("serviceCidr") };
}

export const defaultLabInput: LabInput = {
  prefix: "sy",
  nodes: 3,
  zones: 2,
  ipFamily: "ipv4",
  ...ipv4Networks,
};

/** The families a choice stands for, the primary first. */
export function familiesOf(choice: IpFamily): Family[] {
  return choice === "ipv4" ? ["IPv4"] : choice === "ipv6" ? ["IPv6"] : ["IPv4", "IPv6"];
}

/**
 * The CIDRs of one flag, one per family in the families' order, or a one-line error naming the flag (both
 * runtimes' `up` check their ranges with it).
 */
export function perFamily(flag: string, list: string, choice: IpFamily): string[] {
  const cidrs = cidrList(list);
  for (const c of cidrs) cidrRange(c);
  const families = familiesOf(choice);
  if (cidrs.map((c) => familyOf(c)).join(",") !== families.join(",")) {
    const want =
      families.length === 2
        ? "an IPv4 and an IPv6 range, comma-separated, IPv4 first"
        : `one ${families[0]} range`;
    throw new Error(`--${flag} ${list}: --ip-family ${choice} wants ${want}`);
  }
  return cidrs;
}

export function zoneName(i: number): string {
  return `zone-${String.fromCharCode("a".charCodeAt(0) + i)}`;
}

/**
 * `cgroup2Mount`: this machine's, when ebpf mode can work here; `limits`: where its memory and cpu controllers are
 * (the netns runtime's up finds both).
 */
export function planLab(input: LabInput, cgroup2Mount?: string, limits?: LimitMounts): LabPlan {
  if (!/^[a-z][a-z0-9]{0,5}$/.test(input.prefix)) {
    // Interface names are limited to 15 bytes; "<prefix>-n<index>" must fit.
    throw new Error(`lab prefix must be 1-6 lower-case letters or digits, got "${input.prefix}"`);
  }
  if (!Number.isInteger(input.nodes) || input.nodes < 1 || input.nodes > 200) {
    throw new Error(`--nodes must be 1-200, got ${input.nodes}`);
  }
  if (!Number.isInteger(input.zones) || input.zones < 1 || input.zones > 26) {
    throw new Error(`--zones must be 1-26, got ${input.zones}`);
  }
  const choice = input.ipFamily ?? "ipv4";
  const serviceCidrs = perFamily("service-cidr", input.serviceCidr, choice);
  perFamily("cluster-cidr", input.clusterCidr, choice);
  const networks = perFamily("node-cidr", input.nodeCidr, choice).map((nodeCidr): FamilyNetwork => {
    const net = cidrRange(nodeCidr);
    if (net.bits > (net.family === "IPv4" ? 24 : 120))
      throw new Error(
        `the node network ${nodeCidr} must be a /${net.family === "IPv4" ? 24 : 120} or larger`,
      );
    return { family: net.family, nodeCidr, prefixLength: net.bits, gateway: nth(nodeCidr, 1) };
  });
  const ebpf = cgroup2Mount ? ebpfPlaces(cgroup2Mount, input.prefix) : undefined;
  const v1Limits =
    ebpf && limits?.kind === "v1"
      ? { memory: labLimitDir(limits.memory, input.prefix), cpu: labLimitDir(limits.cpu, input.prefix) }
      : undefined;
  const nodeLimits = (name: string, cgroup: string) =>
    v1Limits
      ? { memory: `${v1Limits.memory}/${name}`, cpu: `${v1Limits.cpu}/${name}` }
      : limits?.kind === "cgroup2"
        ? { memory: cgroup, cpu: cgroup }
        : undefined;
  const nodeList = Array.from({ length: input.nodes }, (_, i): NodePlan => {
    const index = i + 1;
    const ips = networks.map((n) => nth(n.nodeCidr, 10 + index));
    const name = `node-${index}`;
    return {
      index,
      name,
      zone: zoneName(i % input.zones),
      netns: `${input.prefix}-node-${index}`,
      hostVeth: `${input.prefix}-n${index}`,
      ip: ips[0] ?? "",
      ips,
      ...(ebpf ? ebpfNode(ebpf, name, nodeLimits) : {}),
    };
  });
  const primary = networks[0] as FamilyNetwork;
  return {
    ...input,
    bridge: `${input.prefix}-lab0`,
    gateway: primary.gateway,
    prefixLength: primary.prefixLength,
    networks,
    // kubeadm's kube-dns is single-stack in the primary family; its address is the tenth of that range.
    dnsIp: nth(serviceCidrs[0] ?? "", 10),
    nodeList,
    ...(ebpf ? { ebpf } : {}),
    ...(v1Limits ? { v1Limits } : {}),
  };
}

/** A node's cgroup, pin folder and limit folders, where the host has ebpf mode's places. */
function ebpfNode(
  ebpf: EbpfPlaces,
  name: string,
  limitsOf: (name: string, cgroup: string) => NodePlan["limits"],
): Pick<NodePlan, "cgroup" | "pinRoot" | "limits"> {
  const cgroup = nodeCgroup(ebpf, name);
  const limits = limitsOf(name, cgroup);
  return { cgroup, pinRoot: nodePinRoot(ebpf, name), ...(limits ? { limits } : {}) };
}

export function nodeByName(plan: LabPlan, name: string): NodePlan {
  const node = plan.nodeList.find((n) => n.name === name);
  if (!node)
    throw new Error(`no node ${name} in this lab (nodes: ${plan.nodeList.map((n) => n.name).join(", ")})`);
  return node;
}

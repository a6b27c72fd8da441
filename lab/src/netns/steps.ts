import { dirname } from "node:path";
import { type IPFamily as Family, familyOf } from "@switchyard/basics";
import { labCgroup, labPinDir } from "../stack/ebpf-places.js";
import type { LabPlan, NodePlan } from "./plan.js";

/**
 * How to take back something a step created. Objects inside a namespace vanish with it, so only namespaces and
 * root-namespace objects (the bridge, veth ends, routes, cgroups, pin folders) carry an undo. A namespace and a
 * cgroup are removed once the processes in them have stopped.
 */
export type Undo =
  | { kind: "netns"; name: string }
  | { kind: "cgroup"; path: string }
  | { kind: "cmd"; argv: string[] };

/** One command of the plan, with the undo recorded in the journal before it runs. */
export interface Step {
  argv: string[];
  undo?: Undo;
}

const ipIn = (netns: string, ...args: string[]): string[] => ["ip", "-n", netns, ...args];

/** `ip` for a family's routes: IPv6 ones need -6 where the command cannot tell from an address. */
const ipFamilyFlag = (f: Family) => (f === "IPv6" ? ["-6"] : []);

/**
 * An address on a link. IPv6 addresses skip duplicate address detection (`nodad`): every address here is planned
 * and unique, and a tentative address for the first second or two would refuse to be a source or a gateway.
 */
const addAddress = (cidrAddress: string): string[] => [
  "addr",
  "add",
  cidrAddress,
  ...(familyOf(cidrAddress) === "IPv6" ? ["nodad"] : []),
];

const forwarding = (f: Family) => (f === "IPv4" ? "net.ipv4.ip_forward=1" : "net.ipv6.conf.all.forwarding=1");

/** The lab bridge in the root namespace; it carries the control plane's address. */
export function bridgeSteps(plan: LabPlan): Step[] {
  return [
    {
      argv: ["ip", "link", "add", plan.bridge, "type", "bridge"],
      undo: { kind: "cmd", argv: ["ip", "link", "del", plan.bridge] },
    },
    ...plan.networks.map((n) => ({
      argv: ["ip", ...addAddress(`${n.gateway}/${n.prefixLength}`), "dev", plan.bridge],
    })),
    { argv: ["ip", "link", "set", plan.bridge, "up"] },
  ];
}

/**
 * ebpf mode's places (stack/ebpf-places.ts): the lab's cgroup2 directory with one per node, and its pin folder;
 * on a hybrid host also the lab's folders in the v1 memory and cpu hierarchies (limit-places.ts), where the agents
 * put their pods' limits. The shared `switchyard` folders above them go only when no other lab's are left in them.
 * Made before the nodes, so that teardown, newest first, removes them after the nodes' processes have been stopped gracefully; any
 * process still in a node's cgroup then is stopped with it, and removing the pins detaches the programs.
 */
export function ebpfPlaceSteps(plan: LabPlan): Step[] {
  const p = plan.ebpf;
  if (!p) return [];
  const shared = (dir: string): Step => ({
    argv: ["mkdir", "-p", dir],
    undo: { kind: "cmd", argv: ["rmdir", "--ignore-fail-on-non-empty", dir] },
  });
  const cgroup = (path: string): Step => ({ argv: ["mkdir", "-p", path], undo: { kind: "cgroup", path } });
  return [
    shared(dirname(labCgroup(p))),
    cgroup(labCgroup(p)),
    ...plan.nodeList.flatMap((n) => (n.cgroup ? [cgroup(n.cgroup)] : [])),
    shared(dirname(labPinDir(p))),
    { argv: ["mkdir", "-p", labPinDir(p)], undo: { kind: "cmd", argv: ["rm", "-rf", labPinDir(p)] } },
    ...[plan.v1Limits?.memory, plan.v1Limits?.cpu].flatMap((dir) =>
      dir ? [shared(dirname(dir)), cgroup(dir)] : [],
    ),
  ];
}

/** A node: its namespace, a veth to the lab bridge, an address per family, and forwarding on (it routes for its pods). */
export function nodeSteps(plan: LabPlan, node: NodePlan): Step[] {
  return [
    { argv: ["ip", "netns", "add", node.netns], undo: { kind: "netns", name: node.netns } },
    {
      argv: ["ip", "link", "add", node.hostVeth, "type", "veth", "peer", "name", "eth0", "netns", node.netns],
      undo: { kind: "cmd", argv: ["ip", "link", "del", node.hostVeth] },
    },
    { argv: ["ip", "link", "set", node.hostVeth, "master", plan.bridge, "up"] },
    ...plan.networks.map((n, i) => ({
      argv: ipIn(node.netns, ...addAddress(`${node.ips[i]}/${n.prefixLength}`), "dev", "eth0"),
    })),
    { argv: ipIn(node.netns, "link", "set", "lo", "up") },
    { argv: ipIn(node.netns, "link", "set", "eth0", "up") },
    ...plan.networks.map((n) => ({
      argv: ipIn(node.netns, ...ipFamilyFlag(n.family), "route", "add", "default", "via", n.gateway),
    })),
    ...plan.networks.map((n) => ({
      argv: ["ip", "netns", "exec", node.netns, "sysctl", "-qw", forwarding(n.family)],
    })),
  ];
}

/** One of a pod's networks: the node's pod CIDR of a family and its gateway there (cbr0's address). */
export interface PodNetwork {
  podCidr: string;
  gateway: string;
}

/** The node's pod bridge; its addresses (each pod CIDR's first) are every pod's gateways. */
export function podBridgeSteps(node: NodePlan, networks: readonly PodNetwork[]): Step[] {
  return [
    { argv: ipIn(node.netns, "link", "add", "cbr0", "type", "bridge") },
    ...networks.map((n) => ({
      argv: ipIn(node.netns, ...addAddress(`${n.gateway}/${n.podCidr.split("/")[1] ?? "24"}`), "dev", "cbr0"),
    })),
    { argv: ipIn(node.netns, "link", "set", "cbr0", "up") },
  ];
}

/**
 * Every node's pod CIDRs (one per family, comma-separated as `spec.podCIDRs` joined) routed via that node's address
 * of the same family, from the root namespace and from every other node.
 */
export function podRouteSteps(plan: LabPlan, podCidrs: ReadonlyMap<string, string>): Step[] {
  const steps: Step[] = [];
  for (const target of plan.nodeList) {
    const cidrs = podCidrs.get(target.name)?.split(",");
    if (!cidrs) throw new Error(`node ${target.name} has no pod CIDR yet`);
    for (const cidr of cidrs) {
      const via = target.ips.find((ip) => familyOf(ip) === familyOf(cidr));
      if (!via)
        throw new Error(`node ${target.name} has no ${familyOf(cidr)} address for its pod CIDR ${cidr}`);
      steps.push({
        argv: ["ip", "route", "replace", cidr, "via", via],
        undo: { kind: "cmd", argv: ["ip", "route", "del", cidr, "via", via] },
      });
      for (const other of plan.nodeList) {
        if (other !== target) steps.push({ argv: ipIn(other.netns, "route", "replace", cidr, "via", via) });
      }
    }
  }
  return steps;
}

export interface PodSandboxSpec {
  node: NodePlan;
  netns: string;
  /** The node-side end of the pod's veth, enslaved to cbr0. */
  hostVeth: string;
  /** One per family, the primary first. */
  addresses: { ip: string; prefixLength: number; gateway: string }[];
  /** Set in the pod's namespace once it is up: name to value. */
  sysctls?: Record<string, string>;
}

export function podSandboxSteps(s: PodSandboxSpec): Step[] {
  return [
    { argv: ["ip", "netns", "add", s.netns], undo: { kind: "netns", name: s.netns } },
    {
      argv: ipIn(
        s.node.netns,
        "link",
        "add",
        s.hostVeth,
        "type",
        "veth",
        "peer",
        "name",
        "eth0",
        "netns",
        s.netns,
      ),
    },
    { argv: ipIn(s.node.netns, "link", "set", s.hostVeth, "master", "cbr0", "up") },
    // The kubelet's hairpin-veth mode (the CNI bridge plugin's hairpinMode): a pod reaching its own Service can be
    // sent back to itself, and the bridge only forwards a frame out of the port it came in on with hairpin on.
    { argv: ipIn(s.node.netns, "link", "set", s.hostVeth, "type", "bridge_slave", "hairpin", "on") },
    ...s.addresses.map((a) => ({
      argv: ipIn(s.netns, ...addAddress(`${a.ip}/${a.prefixLength}`), "dev", "eth0"),
    })),
    { argv: ipIn(s.netns, "link", "set", "lo", "up") },
    { argv: ipIn(s.netns, "link", "set", "eth0", "up") },
    // The runtime's defaults and the pod's own (agent/pod-sysctls.ts).
    ...(Object.keys(s.sysctls ?? {}).length
      ? [
          {
            argv: [
              ...["ip", "netns", "exec", s.netns, "sysctl", "-qw"],
              ...Object.entries(s.sysctls ?? {}).map(([k, v]) => `${k}=${v}`),
            ],
          },
        ]
      : []),
    ...s.addresses.map((a) => ({
      argv: ipIn(s.netns, ...ipFamilyFlag(familyOf(a.ip)), "route", "add", "default", "via", a.gateway),
    })),
  ];
}

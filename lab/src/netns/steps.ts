import type { LabPlan, NodePlan } from "./plan.js";

/**
 * How to take back something a step created. Objects inside a namespace vanish with it, so only namespaces and
 * root-namespace objects (the bridge, veth ends, routes) carry an undo.
 */
export type Undo = { kind: "netns"; name: string } | { kind: "cmd"; argv: string[] };

/** One command of the plan, with the undo recorded in the journal before it runs. */
export interface Step {
  argv: string[];
  undo?: Undo;
}

const ipIn = (netns: string, ...args: string[]): string[] => ["ip", "-n", netns, ...args];

/** The lab bridge in the root namespace; it carries the control plane's address. */
export function bridgeSteps(plan: LabPlan): Step[] {
  return [
    {
      argv: ["ip", "link", "add", plan.bridge, "type", "bridge"],
      undo: { kind: "cmd", argv: ["ip", "link", "del", plan.bridge] },
    },
    { argv: ["ip", "addr", "add", `${plan.gateway}/${plan.prefixLength}`, "dev", plan.bridge] },
    { argv: ["ip", "link", "set", plan.bridge, "up"] },
  ];
}

/** A node: its namespace, a veth to the lab bridge, its address, and forwarding on (it routes for its pods). */
export function nodeSteps(plan: LabPlan, node: NodePlan): Step[] {
  return [
    { argv: ["ip", "netns", "add", node.netns], undo: { kind: "netns", name: node.netns } },
    {
      argv: ["ip", "link", "add", node.hostVeth, "type", "veth", "peer", "name", "eth0", "netns", node.netns],
      undo: { kind: "cmd", argv: ["ip", "link", "del", node.hostVeth] },
    },
    { argv: ["ip", "link", "set", node.hostVeth, "master", plan.bridge, "up"] },
    { argv: ipIn(node.netns, "addr", "add", `${node.ip}/${plan.prefixLength}`, "dev", "eth0") },
    { argv: ipIn(node.netns, "link", "set", "lo", "up") },
    { argv: ipIn(node.netns, "link", "set", "eth0", "up") },
    { argv: ipIn(node.netns, "route", "add", "default", "via", plan.gateway) },
    { argv: ["ip", "netns", "exec", node.netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"] },
  ];
}

/** The node's pod bridge; its address (the pod CIDR's first) is every pod's gateway. */
export function podBridgeSteps(node: NodePlan, podCidr: string, gateway: string): Step[] {
  const len = podCidr.split("/")[1] ?? "24";
  return [
    { argv: ipIn(node.netns, "link", "add", "cbr0", "type", "bridge") },
    { argv: ipIn(node.netns, "addr", "add", `${gateway}/${len}`, "dev", "cbr0") },
    { argv: ipIn(node.netns, "link", "set", "cbr0", "up") },
  ];
}

/** Every node's pod CIDR routed via that node, from the root namespace and from every other node. */
export function podRouteSteps(plan: LabPlan, podCidrs: ReadonlyMap<string, string>): Step[] {
  const steps: Step[] = [];
  for (const target of plan.nodeList) {
    const cidr = podCidrs.get(target.name);
    if (!cidr) throw new Error(`node ${target.name} has no pod CIDR yet`);
    steps.push({
      argv: ["ip", "route", "replace", cidr, "via", target.ip],
      undo: { kind: "cmd", argv: ["ip", "route", "del", cidr, "via", target.ip] },
    });
    for (const other of plan.nodeList) {
      if (other !== target)
        steps.push({ argv: ipIn(other.netns, "route", "replace", cidr, "via", target.ip) });
    }
  }
  return steps;
}

export interface PodSandboxSpec {
  node: NodePlan;
  netns: string;
  /** The node-side end of the pod's veth, enslaved to cbr0. */
  hostVeth: string;
  ip: string;
  prefixLength: number;
  gateway: string;
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
    { argv: ipIn(s.netns, "addr", "add", `${s.ip}/${s.prefixLength}`, "dev", "eth0") },
    { argv: ipIn(s.netns, "link", "set", "lo", "up") },
    { argv: ipIn(s.netns, "link", "set", "eth0", "up") },
    { argv: ipIn(s.netns, "route", "add", "default", "via", s.gateway) },
  ];
}

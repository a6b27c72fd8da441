import { nth, parseCidr } from "./ipv4.js";

/**
 * The lab's shape as data: names and addresses of the bridge, the nodes and their namespaces. Everything the
 * runtime creates is derived from this, so `down`, `status` and tests agree with `up` by construction.
 */
export interface LabInput {
  /** Prefix of every kernel object's name; two labs on one host need different prefixes and networks. */
  prefix: string;
  nodes: number;
  zones: number;
  /** The node network: the bridge takes the first address, node n takes address 10 + n. */
  nodeCidr: string;
  clusterCidr: string;
  serviceCidr: string;
}

export interface NodePlan {
  index: number;
  /** The Node object's name and the kubernetes.io/hostname label. */
  name: string;
  zone: string;
  netns: string;
  /** The root-namespace end of the node's veth, enslaved to the lab bridge. */
  hostVeth: string;
  ip: string;
}

export interface LabPlan extends LabInput {
  bridge: string;
  /** The bridge's address: the node network's gateway and where kube-apiserver listens. */
  gateway: string;
  prefixLength: number;
  /** The kube-dns Service's ClusterIP, written into every pod's resolv.conf (the tenth service address). */
  dnsIp: string;
  nodeList: NodePlan[];
}

export const defaultLabInput: LabInput = {
  prefix: "sy",
  nodes: 3,
  zones: 2,
  nodeCidr: "198.18.0.0/24",
  clusterCidr: "10.244.0.0/16",
  serviceCidr: "10.96.0.0/16",
};

export function zoneName(i: number): string {
  return `zone-${String.fromCharCode("a".charCodeAt(0) + i)}`;
}

export function planLab(input: LabInput): LabPlan {
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
  const net = parseCidr(input.nodeCidr);
  if (net.bits > 24) throw new Error(`the node network ${input.nodeCidr} must be a /24 or larger`);
  const nodeList = Array.from({ length: input.nodes }, (_, i) => {
    const index = i + 1;
    return {
      index,
      name: `node-${index}`,
      zone: zoneName(i % input.zones),
      netns: `${input.prefix}-node-${index}`,
      hostVeth: `${input.prefix}-n${index}`,
      ip: nth(input.nodeCidr, 10 + index),
    };
  });
  return {
    ...input,
    bridge: `${input.prefix}-lab0`,
    gateway: nth(input.nodeCidr, 1),
    prefixLength: net.bits,
    dnsIp: nth(input.serviceCidr, 10),
    nodeList,
  };
}

export function nodeByName(plan: LabPlan, name: string): NodePlan {
  const node = plan.nodeList.find((n) => n.name === name);
  if (!node)
    throw new Error(`no node ${name} in this lab (nodes: ${plan.nodeList.map((n) => n.name).join(", ")})`);
  return node;
}

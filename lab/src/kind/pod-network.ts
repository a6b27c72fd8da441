/**
 * The kind lab's pod network, in place of kind's kindnet (whose image cannot be built where no registry answers:
 * its module is not on the Go proxy) and doing the part of kindnet's job this lab needs: every node container
 * sits on one Docker network, so a pod network is a ptp/host-local CNI config over the node's podCIDR plus, on
 * each node, a route to every other node's podCIDR through that node's address. No masquerade: lab traffic stays
 * inside the cluster. The same path runs on a laptop's Docker Desktop as here (`docker exec` into each node).
 */

/** Where containerd's CRI plugin reads CNI configs, and our file's name (first in lexical order). */
export const cniConfigPath = "/etc/cni/net.d/10-switchyard.conflist";

/** The CNI config of a node whose podCIDR is `cidr`: a veth per pod, addresses from the node's range. */
export function cniConfig(cidr: string): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "switchyard-lab",
      plugins: [
        {
          type: "ptp",
          ipMasq: false,
          ipam: { type: "host-local", ranges: [[{ subnet: cidr }]], routes: [{ dst: "0.0.0.0/0" }] },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** A node as the pod network needs it: its range and the address other nodes route that range through. */
export interface PodNetworkNode {
  name: string;
  podCidr: string;
  address: string;
}

interface NodeObject {
  metadata?: { name?: string };
  spec?: { podCIDR?: string };
  status?: { addresses?: { type?: string; address?: string }[] | null };
}

/**
 * From `kubectl get nodes -o json`: every node with its podCIDR and InternalIP, or what is still missing (the
 * controller-manager assigns podCIDRs after a node registers). Read from outside with the lab's kubeconfig: since
 * v1.37 a node's own credentials may read only its own Node.
 */
export function podNetworkNodes(items: readonly NodeObject[], expected: number): PodNetworkNode[] | string {
  const nodes = items.map((n) => ({
    name: n.metadata?.name ?? "",
    podCidr: n.spec?.podCIDR ?? "",
    address: n.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? "",
  }));
  // They go into a shell script: anything but what the API validates them to be is refused, not quoted.
  const bad = nodes.find(
    (n) =>
      !/^[a-z0-9.-]+$/.test(n.name) ||
      (n.podCidr && !/^[0-9a-fA-F.:]+\/\d+$/.test(n.podCidr)) ||
      (n.address && !/^[0-9a-fA-F.:]+$/.test(n.address)),
  );
  if (bad)
    throw new Error(`node ${JSON.stringify(bad)}: not a name, CIDR and address the pod network can use`);
  if (nodes.length < expected) return `${nodes.length} of ${expected} nodes registered`;
  const waiting = nodes.filter((n) => !n.podCidr || !n.address).map((n) => n.name);
  return waiting.length > 0 ? `no podCIDR or address yet: ${waiting.join(", ")}` : nodes;
}

/**
 * A POSIX shell script for one node container (`docker exec NODE sh -c SCRIPT`): the CNI config for its own range,
 * written whole then renamed (containerd never reads half a file), and a route to each other node's range.
 * Idempotent: a second run rewrites the same file and replaces the same routes.
 */
export function podNetworkScript(
  me: PodNetworkNode,
  all: readonly PodNetworkNode[],
  configPath = cniConfigPath,
): string {
  const others = all.filter((n) => n.name !== me.name);
  return [
    "set -eu",
    `mkdir -p "$(dirname ${configPath})"`,
    `cat > ${configPath}.tmp <<'EOF'`,
    cniConfig(me.podCidr),
    "EOF",
    `mv ${configPath}.tmp ${configPath}`,
    ...others.map((n) => `ip route replace ${n.podCidr} via ${n.address}`),
    `echo "pod network on ${me.name}: ${me.podCidr}, routes to ${others.length} other nodes"`,
  ].join("\n");
}

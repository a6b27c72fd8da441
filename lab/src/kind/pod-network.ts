/**
 * The kind lab's pod network, in place of kind's kindnet (whose image cannot be built where no registry answers:
 * its module is not on the Go proxy) and doing the part of kindnet's job this lab needs: every node container
 * sits on one Docker network, so a pod network is a ptp/host-local CNI config over the node's podCIDR plus, on
 * each node, a route to every other node's podCIDR through that node's address. No masquerade: lab traffic stays
 * inside the cluster. The same path runs on a laptop's Docker Desktop as here (`docker exec` into each node). A
 * dual-stack node has a podCIDR and an address of each family: a range of each in the config, a route per family.
 */
import { familyOf } from "@switchyard/basics";

/** Where containerd's CRI plugin reads CNI configs, and our file's name (first in lexical order). */
export const cniConfigPath = "/etc/cni/net.d/10-switchyard.conflist";

/** The CNI config of a node whose podCIDRs are `cidrs`: a veth per pod, an address from each of the node's ranges. */
export function cniConfig(cidrs: readonly string[]): string {
  const defaults = cidrs.map((c) => ({ dst: familyOf(c) === "IPv6" ? "::/0" : "0.0.0.0/0" }));
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "switchyard-lab",
      plugins: [
        {
          type: "ptp",
          ipMasq: false,
          ipam: { type: "host-local", ranges: cidrs.map((subnet) => [{ subnet }]), routes: defaults },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/**
 * A node as the pod network needs it: its ranges and the addresses other nodes route them through, one of each per
 * family, the primary first.
 */
export interface PodNetworkNode {
  name: string;
  podCidrs: string[];
  addresses: string[];
}

interface NodeObject {
  metadata?: { name?: string };
  spec?: { podCIDR?: string; podCIDRs?: string[] };
  status?: { addresses?: { type?: string; address?: string }[] | null };
}

/**
 * From `kubectl get nodes -o json`: every node with its podCIDRs and InternalIPs (`families` of each), or what is
 * still missing (the controller-manager assigns podCIDRs after a node registers). Read from outside with the lab's
 * kubeconfig: since v1.37 a node's own credentials may read only its own Node.
 */
export function podNetworkNodes(
  items: readonly NodeObject[],
  expected: number,
  families = 1,
): PodNetworkNode[] | string {
  const nodes = items.map((n) => ({
    name: n.metadata?.name ?? "",
    podCidrs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
    addresses: (n.status?.addresses ?? []).filter((a) => a.type === "InternalIP").map((a) => a.address ?? ""),
  }));
  // They go into a shell script: anything but what the API validates them to be is refused, not quoted.
  const bad = nodes.find(
    (n) =>
      !/^[a-z0-9.-]+$/.test(n.name) ||
      n.podCidrs.some((c) => !/^[0-9a-fA-F.:]+\/\d+$/.test(c)) ||
      n.addresses.some((a) => !/^[0-9a-fA-F.:]+$/.test(a)),
  );
  if (bad)
    throw new Error(`node ${JSON.stringify(bad)}: not a name, CIDR and address the pod network can use`);
  if (nodes.length < expected) return `${nodes.length} of ${expected} nodes registered`;
  const waiting = nodes
    .filter((n) => n.podCidrs.length < families || n.addresses.length < families)
    .map((n) => n.name);
  return waiting.length > 0 ? `no podCIDR or address yet: ${waiting.join(", ")}` : nodes;
}

/** Each of a node's ranges with its address of the same family: the routes other nodes take to its pods. */
function routesTo(n: PodNetworkNode): string[] {
  return n.podCidrs.flatMap((cidr) => {
    const via = n.addresses.find((a) => familyOf(a) === familyOf(cidr));
    return via ? [`ip route replace ${cidr} via ${via}`] : [];
  });
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
    cniConfig(me.podCidrs),
    "EOF",
    `mv ${configPath}.tmp ${configPath}`,
    ...others.flatMap(routesTo),
    `echo "pod network on ${me.name}: ${me.podCidrs.join(" ")}, routes to ${others.length} other nodes"`,
  ].join("\n");
}

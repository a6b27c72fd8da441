// What ebpf mode needs inside a kind node container, and how the lab makes it. A node is a container with a
// cgroup namespace of its own (node-container.ts), so a cgroup2 mount made inside it has the node container's
// cgroup as its root: every process of the node, its systemd, kubelet and containerd and every pod they start,
// is below it, and no process of another node is. The proxy's socket programs attach there. Pins need a BPF file
// system; each mount of one is a file system of its own, so a mount per node keeps every node's pins apart
// although all nodes share this machine's kernel.
import type { KindEbpfPlaces } from "../stack/ebpf-places.js";

/** Where each kind node's proxy finds its node's cgroup2 hierarchy and pins (the same paths in every node). */
export const kindEbpfPlaces: KindEbpfPlaces = {
  runtime: "kind",
  // In /run: /sys/fs/cgroup is the engine's (read-only on a cgroup v1 host) and may already be cgroup2 itself.
  nodeCgroup2: "/run/switchyard/cgroup2",
  pinRoot: "/sys/fs/bpf/switchyard",
};

/** The systemd unit that mounts both, before the kubelet starts, at every start of the node container. */
export const kindEbpfUnit = "switchyard-ebpf-mounts.service";

/**
 * A oneshot service rather than mount units: systemd refuses a mount unit for /sys/fs/bpf (an API file system
 * to it). Each mount is skipped when already there, so starting it again changes nothing.
 */
function unitFile(p: KindEbpfPlaces): string {
  const mount = (fsType: string, where: string) =>
    `ExecStart=/bin/sh -c "mkdir -p ${where} && (mountpoint -q ${where} || mount -t ${fsType} ${fsType} ${where})"`;
  return [
    "[Unit]",
    "Description=The BPF file system and a cgroup2 mount for Switchyard's kube-proxy in ebpf mode",
    "Before=kubelet.service",
    "[Service]",
    "Type=oneshot",
    "RemainAfterExit=yes",
    mount("bpf", "/sys/fs/bpf"),
    mount("cgroup2", p.nodeCgroup2),
    "[Install]",
    "WantedBy=multi-user.target",
  ].join("\n");
}

/**
 * The `sh -c` script that gives a node both through that unit, enabled, so that a node container the engine
 * restarts mounts them again before its kubelet starts its pods (a hostPath is bound as it is at the pod's start).
 */
export function kindEbpfMountScript(p: KindEbpfPlaces = kindEbpfPlaces): string {
  return [
    "set -e",
    `cat > /etc/systemd/system/${kindEbpfUnit} <<'UNIT'\n${unitFile(p)}\nUNIT`,
    "systemctl daemon-reload",
    `systemctl enable --now ${kindEbpfUnit}`,
  ].join("\n");
}

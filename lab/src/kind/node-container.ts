import { GenericContainer, Wait } from "testcontainers";
import { apiServerPort } from "./kubeadm-config.js";
import type { KindNodePlan } from "./options.js";

/** kind's labels: `kind get clusters`, `kind load` and `kind export` find a cluster's nodes by them. */
export const kindClusterLabel = "io.x-k8s.kind.cluster";
export const kindRoleLabel = "io.x-k8s.kind.role";

/** The network kind makes for every cluster it creates, and never removes. */
export const kindNetwork = "kind";

/**
 * One kind node as testcontainers starts it, with the flags kind's docker provider passes `docker run`
 * (pkg/cluster/internal/providers/docker/provision.go): privileged with seccomp and AppArmor off (a container
 * runtime runs inside), its own cgroup namespace, tmpfs /tmp and /run for systemd, /var on a volume of its own
 * (pods and images off the container's filesystem), the host's modules read-only, restarted once after a
 * failure (so a rebooted engine brings it back), the hostname its name. The control plane publishes the
 * apiserver on a loopback port of the host. Started once systemd reports the multi-user target, as kind waits.
 */
export class KindNodeContainer extends GenericContainer {
  /** `ipv6`: the cluster has IPv6 (kind's rule): IPv6 on in the node, and forwarding, for its pods' routes. */
  constructor(
    image: string,
    cluster: string,
    node: KindNodePlan,
    network: string,
    reap: boolean,
    ipv6 = false,
  ) {
    super(image);
    this.withName(node.name)
      .withLabels({ [kindClusterLabel]: cluster, [kindRoleLabel]: node.role })
      .withNetworkMode(network)
      .withPrivilegedMode()
      .withSecurityOpt("seccomp=unconfined", "apparmor=unconfined")
      .withTmpFs({ "/tmp": "", "/run": "" })
      .withBindMounts([{ source: "/lib/modules", target: "/lib/modules", mode: "ro" }])
      // A lab outlives the command that brings it up: only a test's cluster is left to Ryuk (reap).
      .withAutoCleanup(reap)
      .withWaitStrategy(Wait.forLogMessage(/Reached target .*Multi-User System|detected cgroup v1/))
      .withStartupTimeout(120_000);
    this.createOpts.Hostname = node.name;
    this.createOpts.Tty = true;
    this.createOpts.Volumes = { "/var": {} };
    this.hostConfig.RestartPolicy = { Name: "on-failure", MaximumRetryCount: 1 };
    this.hostConfig.Init = false;
    // Docker's API has it (v1.41+); dockerode's types do not yet.
    Object.assign(this.hostConfig, { CgroupnsMode: "private" });
    if (ipv6)
      this.hostConfig.Sysctls = {
        "net.ipv6.conf.all.disable_ipv6": "0",
        "net.ipv6.conf.all.forwarding": "1",
      };
    if (node.role === "control-plane") {
      this.withEnvironment({ KUBECONFIG: "/etc/kubernetes/admin.conf" });
      const port = `${apiServerPort}/tcp`;
      this.createOpts.ExposedPorts = { [port]: {} };
      // An empty HostPort: the engine picks a free one, bound to loopback only (kind's choice too).
      this.hostConfig.PortBindings = { [port]: [{ HostIp: "127.0.0.1", HostPort: "" }] };
    }
  }
}

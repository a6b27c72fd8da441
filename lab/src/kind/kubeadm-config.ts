import yaml from "js-yaml";
import type { IpFamily } from "../netns/plan.js";
import type { ProxyMode } from "../stack/manifests.js";

/**
 * The kubeadm config a node reads from /kind/kubeadm.conf, as kind v0.33 generates it for a v1beta4 release
 * (pkg/cluster/internal/kubeadm/config.go: the same documents and values), with the lab's own settings written
 * in where kind would merge a kubeadmConfigPatch: kube-controller-manager's controllers without the two
 * EndpointSlice controllers (Switchyard's stack), kubelet's failCgroupV1 off, and kubeadm's system verification a
 * warning (a cgroup v1 host fails it). Address families as kind's networking.ipFamily sets them: a range of each in
 * the subnets, an address of each in the kubelet's node-ip; IPv6-only components listening on IPv6.
 */
export interface KubeadmCluster {
  /** The cluster's name: kind's, also `clusterName` and part of each node's provider ID. */
  name: string;
  kubernetesVersion: string;
  /** Absent: ipv4. */
  ipFamily?: IpFamily;
  /** One range per family, comma-separated, the primary first: kubeadm gives both to the components. */
  podSubnet: string;
  serviceSubnet: string;
  /** "none" when Switchyard's kube-proxy is applied instead (kubeadm skips its addon). */
  kubeProxyMode: "none" | ProxyMode;
  /** kube-controller-manager's --controllers, when it is not kubeadm's default. */
  controllers?: string;
}

export interface KubeadmNode {
  name: string;
  role: "control-plane" | "worker";
  /** The node's addresses on the kind network, one per family of the cluster, the primary first. */
  ips: string[];
  labels: Record<string, string>;
}

/**
 * kube-controller-manager's controllers without the two Switchyard's slice controller replaces. kubeadm's own
 * value is `*,bootstrapsigner,tokencleaner` (those two are off by default): without bootstrapsigner the
 * cluster-info ConfigMap is never signed and `kubeadm join` waits for it forever, so they stay.
 */
export const controllersWithoutSlices =
  "*,bootstrapsigner,tokencleaner,-endpointslice-controller,-endpointslice-mirroring-controller";

/** kind's well-known bootstrap token (pkg/cluster/internal/kubeadm/const.go): the nodes are trusted by construction. */
export const kindToken = "abcdef.0123456789abcdef";
/** The apiserver's port inside the node; the host reaches it on a published loopback port. */
export const apiServerPort = 6443;
const criSocket = "unix:///run/containerd/containerd.sock";

/** kind names the control-plane node `<cluster>-control-plane`; the nodes find the apiserver there. */
export const controlPlaneEndpoint = (cluster: string) => `${cluster}-control-plane:${apiServerPort}`;

const arg = (name: string, value: string) => ({ name, value });

function nodeRegistration(c: KubeadmCluster, n: KubeadmNode) {
  const labels = Object.entries(n.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return {
    criSocket,
    kubeletExtraArgs: [
      // Both addresses for a dual-stack cluster: the kubelet reports an InternalIP of each, the primary first.
      arg("node-ip", n.ips.join(",")),
      arg("provider-id", `kind://docker/${c.name}/${n.name}`),
      ...(labels ? [arg("node-labels", labels)] : []),
    ],
    ignorePreflightErrors: ["SystemVerification"],
  };
}

/** The documents of one node's config, as objects (the tests read them back). */
export function kubeadmDocuments(c: KubeadmCluster, n: KubeadmNode): object[] {
  const kubeadm = "kubeadm.k8s.io/v1beta4";
  const endpoint = controlPlaneEndpoint(c.name);
  // An IPv6-only cluster's components listen on IPv6 (kind's choice): their defaults are IPv4 addresses.
  const ipv6 = c.ipFamily === "ipv6";
  const docs: object[] = [
    {
      apiVersion: kubeadm,
      kind: "ClusterConfiguration",
      kubernetesVersion: c.kubernetesVersion,
      clusterName: c.name,
      controlPlaneEndpoint: endpoint,
      // The host reaches the apiserver on 127.0.0.1 (a published port): the certificate must name it.
      apiServer: { certSANs: ["localhost", "127.0.0.1"] },
      controllerManager: {
        extraArgs: [
          arg("enable-hostpath-provisioner", "true"),
          ...(c.controllers ? [arg("controllers", c.controllers)] : []),
          ...(ipv6 ? [arg("bind-address", "::")] : []),
        ],
      },
      scheduler: ipv6 ? { extraArgs: [arg("bind-address", "::1")] } : {},
      networking: { podSubnet: c.podSubnet, serviceSubnet: c.serviceSubnet },
    },
    {
      apiVersion: kubeadm,
      kind: "InitConfiguration",
      bootstrapTokens: [{ token: kindToken }],
      localAPIEndpoint: { advertiseAddress: n.ips[0], bindPort: apiServerPort },
      nodeRegistration: nodeRegistration(c, n),
      // kind pre-loads every image, so preflight's image pulls are skipped.
      skipPhases: ["preflight", ...(c.kubeProxyMode === "none" ? ["addon/kube-proxy"] : [])],
    },
    {
      apiVersion: kubeadm,
      kind: "JoinConfiguration",
      nodeRegistration: nodeRegistration(c, n),
      discovery: {
        bootstrapToken: { apiServerEndpoint: endpoint, token: kindToken, unsafeSkipCAVerification: true },
      },
      skipPhases: ["preflight"],
    },
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      cgroupDriver: "systemd",
      cgroupRoot: "/kubelet",
      failSwapOn: false,
      ...(ipv6 ? { address: "::", healthzBindAddress: "::" } : {}),
      // kubelet ≥ 1.35 refuses a cgroup v1 host unless told otherwise; on cgroup v2 this changes nothing.
      failCgroupV1: false,
      // The node sees the host's disk: no disk-pressure eviction or image GC on its account (as kind).
      imageGCHighThresholdPercent: 100,
      evictionHard: { "nodefs.available": "0%", "nodefs.inodesFree": "0%", "imagefs.available": "0%" },
    },
  ];
  if (c.kubeProxyMode !== "none")
    docs.push({
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      mode: c.kubeProxyMode,
      iptables: { minSyncPeriod: "1s" },
      // maxPerCore 0: leave the host-global nf_conntrack_max alone; tcpBeLiberal as kind sets it for nftables.
      conntrack: { maxPerCore: 0, ...(c.kubeProxyMode === "nftables" ? { tcpBeLiberal: true } : {}) },
    });
  return docs;
}

/** The file kubeadm reads: the documents as YAML, separated by `---`. */
export function renderKubeadmConfig(c: KubeadmCluster, n: KubeadmNode): string {
  const header =
    "# Written by switchyard-lab up --runtime kind (lab/src/kind/kubeadm-config.ts), as kind writes it.\n";
  return (
    header +
    kubeadmDocuments(c, n)
      .map((d) => yaml.dump(d, { lineWidth: -1 }))
      .join("---\n")
  );
}

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readVersions } from "@switchyard/testbed/upstream";
import yaml from "js-yaml";
import {
  controllersWithoutSlices,
  type KubeadmCluster,
  type KubeadmNode,
  kindToken,
  kubeadmDocuments,
  renderKubeadmConfig,
} from "../../src/kind/kubeadm-config.js";
import { defaultKindInput, type KindLabInput, kindNodes, validateKindInput } from "../../src/kind/options.js";

const input: KindLabInput = { ...defaultKindInput(readVersions()), nodes: 3, zones: 2 };
const ours: KubeadmCluster = {
  name: "lab",
  kubernetesVersion: "v1.37.2",
  podSubnet: "10.244.0.0/16",
  serviceSubnet: "10.96.0.0/16",
  kubeProxyMode: "none",
  controllers: controllersWithoutSlices,
};
const worker: KubeadmNode = {
  name: "lab-worker",
  role: "worker",
  ips: ["172.18.0.3"],
  labels: { "topology.kubernetes.io/zone": "zone-b" },
};
type Doc = Record<string, any>;
const docs = (c: KubeadmCluster, n: KubeadmNode = worker) =>
  Object.fromEntries((yaml.loadAll(renderKubeadmConfig(c, n)) as Doc[]).map((d) => [d.kind, d])) as Record<
    string,
    Doc
  >;

describe("the kubeadm config each node reads (kind's, written here)", () => {
  const d = docs(ours);

  test("parses back as kind's five documents minus kube-proxy's for Switchyard's stack", () => {
    assert.deepEqual(Object.keys(d), [
      "ClusterConfiguration",
      "InitConfiguration",
      "JoinConfiguration",
      "KubeletConfiguration",
    ]);
    assert.equal(d.ClusterConfiguration?.apiVersion, "kubeadm.k8s.io/v1beta4");
    assert.deepEqual(d.ClusterConfiguration?.networking, {
      podSubnet: "10.244.0.0/16",
      serviceSubnet: "10.96.0.0/16",
    });
    assert.equal(d.ClusterConfiguration?.controlPlaneEndpoint, "lab-control-plane:6443");
    assert.deepEqual(d.ClusterConfiguration?.apiServer.certSANs, ["localhost", "127.0.0.1"]);
  });

  test("Switchyard's stack: kubeadm skips its kube-proxy addon, kcm runs without the EndpointSlice controllers", () => {
    assert.deepEqual(d.InitConfiguration?.skipPhases, ["preflight", "addon/kube-proxy"]);
    assert.deepEqual(d.ClusterConfiguration?.controllerManager.extraArgs, [
      { name: "enable-hostpath-provisioner", value: "true" },
      {
        name: "controllers",
        value: "*,bootstrapsigner,tokencleaner,-endpointslice-controller,-endpointslice-mirroring-controller",
      },
    ]);
    assert.ok(
      controllersWithoutSlices.startsWith("*,bootstrapsigner,tokencleaner,"),
      "kubeadm's own value kept",
    );
  });

  test("upstream's stack: kubeadm's kube-proxy in the chosen mode (kind's settings) and kubeadm's controllers", () => {
    const { controllers: _, ...rest } = ours;
    const u = docs({ ...rest, kubeProxyMode: "nftables" });
    assert.deepEqual(u.InitConfiguration?.skipPhases, ["preflight"]);
    assert.deepEqual(u.ClusterConfiguration?.controllerManager.extraArgs, [
      { name: "enable-hostpath-provisioner", value: "true" },
    ]);
    assert.deepEqual(u.KubeProxyConfiguration, {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      mode: "nftables",
      iptables: { minSyncPeriod: "1s" },
      conntrack: { maxPerCore: 0, tcpBeLiberal: true },
    });
    assert.equal(
      docs({ ...rest, kubeProxyMode: "iptables" }).KubeProxyConfiguration?.conntrack.tcpBeLiberal,
      undefined,
    );
  });

  test("a node registers with its address, kind's provider ID and its zone; joins by kind's token", () => {
    const reg = d.JoinConfiguration?.nodeRegistration;
    assert.deepEqual(reg.kubeletExtraArgs, [
      { name: "node-ip", value: "172.18.0.3" },
      { name: "provider-id", value: "kind://docker/lab/lab-worker" },
      { name: "node-labels", value: "topology.kubernetes.io/zone=zone-b" },
    ]);
    assert.equal(reg.criSocket, "unix:///run/containerd/containerd.sock");
    assert.deepEqual(d.JoinConfiguration?.discovery.bootstrapToken, {
      apiServerEndpoint: "lab-control-plane:6443",
      token: kindToken,
      unsafeSkipCAVerification: true,
    });
    assert.deepEqual(d.InitConfiguration?.localAPIEndpoint, {
      advertiseAddress: "172.18.0.3",
      bindPort: 6443,
    });
  });

  test("kubelet and kubeadm are let run on a cgroup v1 host (kubelet ≥ 1.35 refuses it by default)", () => {
    assert.equal(d.KubeletConfiguration?.failCgroupV1, false);
    assert.equal(d.KubeletConfiguration?.cgroupDriver, "systemd");
    for (const kind of ["InitConfiguration", "JoinConfiguration"])
      assert.deepEqual(d[kind]?.nodeRegistration.ignorePreflightErrors, ["SystemVerification"]);
  });

  test("dual: kubeadm gets both ranges and each kubelet both addresses; the components keep their IPv4 defaults", () => {
    const dual = docs(
      {
        ...ours,
        ipFamily: "dual",
        podSubnet: "10.244.0.0/16,fd00:10:244::/56",
        serviceSubnet: "10.96.0.0/16,fd00:10:96::/112",
      },
      { ...worker, ips: ["172.18.0.3", "fc00:f853:ccd:e793::3"] },
    );
    assert.deepEqual(dual.ClusterConfiguration?.networking, {
      podSubnet: "10.244.0.0/16,fd00:10:244::/56",
      serviceSubnet: "10.96.0.0/16,fd00:10:96::/112",
    });
    for (const kind of ["InitConfiguration", "JoinConfiguration"])
      assert.deepEqual(dual[kind]?.nodeRegistration.kubeletExtraArgs[0], {
        name: "node-ip",
        value: "172.18.0.3,fc00:f853:ccd:e793::3",
      });
    assert.equal(dual.InitConfiguration?.localAPIEndpoint.advertiseAddress, "172.18.0.3");
    assert.deepEqual(dual.ClusterConfiguration?.scheduler, {});
    assert.equal(dual.KubeletConfiguration?.address, undefined);
    assert.equal(dual.ClusterConfiguration?.controllerManager.extraArgs.length, 2);
  });

  test("ipv6: the IPv6 address advertised, and the components listen on IPv6 (kind's settings)", () => {
    const six = docs(
      { ...ours, ipFamily: "ipv6", podSubnet: "fd00:10:244::/56", serviceSubnet: "fd00:10:96::/112" },
      { ...worker, ips: ["fc00:f853:ccd:e793::3"] },
    );
    assert.equal(six.InitConfiguration?.localAPIEndpoint.advertiseAddress, "fc00:f853:ccd:e793::3");
    assert.deepEqual(six.ClusterConfiguration?.scheduler, {
      extraArgs: [{ name: "bind-address", value: "::1" }],
    });
    assert.deepEqual(six.ClusterConfiguration?.controllerManager.extraArgs.at(-1), {
      name: "bind-address",
      value: "::",
    });
    assert.equal(six.KubeletConfiguration?.address, "::");
    assert.equal(six.KubeletConfiguration?.healthzBindAddress, "::");
  });

  test("the file has no metadata names (kubeadm refuses them) and is what kubeadmDocuments holds", () => {
    const text = renderKubeadmConfig(ours, worker);
    assert.ok(!text.includes("metadata"));
    assert.deepEqual(yaml.loadAll(text), kubeadmDocuments(ours, worker));
  });

  test("--nodes 3: one control-plane node plus three workers, zones round-robin", () => {
    assert.deepEqual(
      kindNodes(input).map((n) => [n.role, n.zone]),
      [
        ["control-plane", "zone-a"],
        ["worker", "zone-a"],
        ["worker", "zone-b"],
        ["worker", "zone-a"],
      ],
    );
    assert.equal(input.nodeImage, "kindest/node:v1.37.2");
  });

  test("node names are kind's: <name>-control-plane, <name>-worker, <name>-worker2, ...", () => {
    assert.deepEqual(
      kindNodes({ ...input, name: "lab", zones: 3 }).map((n) => `${n.name} ${n.zone}`),
      ["lab-control-plane zone-a", "lab-worker zone-a", "lab-worker2 zone-b", "lab-worker3 zone-c"],
    );
  });

  test("--ip-family: the ranges default to the family's, kind's (dual: IPv4 first); a mismatch names the flag", () => {
    const dual = defaultKindInput(readVersions(), "dual");
    assert.equal(dual.clusterCidr, "10.244.0.0/16,fd00:10:244::/56");
    assert.equal(dual.serviceCidr, "10.96.0.0/16,fd00:10:96::/112");
    assert.equal(defaultKindInput(readVersions(), "ipv6").serviceCidr, "fd00:10:96::/112");
    assert.doesNotThrow(() => validateKindInput({ ...dual, nodes: 2 }));
    assert.throws(
      () => validateKindInput({ ...dual, clusterCidr: "10.244.0.0/16" }),
      /^Error: --cluster-cidr 10\.244\.0\.0\/16: --ip-family dual wants an IPv4 and an IPv6 range/,
    );
    assert.throws(
      () => validateKindInput({ ...input, serviceCidr: "fd00:10:96::/112" }),
      /^Error: --service-cidr fd00:10:96::\/112: --ip-family ipv4 wants one IPv4 range/,
    );
  });

  test("bad input fails in one line naming the flag", () => {
    for (const [bad, flag] of [
      [{ name: "My_Lab" }, "--name"],
      [{ nodes: 0 }, "--nodes"],
      [{ zones: 27 }, "--zones"],
      [{ nodeImage: "kindest/node:v1.35.0" }, "--node-image"],
    ] as const) {
      assert.throws(
        () => validateKindInput({ ...input, ...bad }),
        (err: Error) => err.message.startsWith(flag) && !err.message.includes("\n"),
      );
    }
    assert.doesNotThrow(() => validateKindInput({ ...input, nodeImage: "registry.example/my-node:dev" }));
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import yaml from "js-yaml";
import { controllersWithoutSlices, renderKindConfig } from "../../src/kind/cluster-config.js";
import { defaultKindInput, type KindLabInput, kindNodes, validateKindInput } from "../../src/kind/options.js";
import { defaultLabInput } from "../../src/netns/plan.js";
import { readVersions } from "../../src/upstream/versions.js";

const input: KindLabInput = { ...defaultKindInput(readVersions()), nodes: 3, zones: 2 };

interface ParsedConfig {
  kind: string;
  apiVersion: string;
  name: string;
  networking: Record<string, unknown>;
  kubeadmConfigPatches: string[];
  nodes: { role: string; image: string; labels: Record<string, string> }[];
}
const parsed = yaml.load(renderKindConfig(input)) as ParsedConfig;

describe("kind cluster config", () => {
  test("is a kind v1alpha4 Cluster named after the lab", () => {
    assert.equal(parsed.kind, "Cluster");
    assert.equal(parsed.apiVersion, "kind.x-k8s.io/v1alpha4");
    assert.equal(parsed.name, "switchyard");
  });

  test("kind installs no kube-proxy and no CNI, and the ranges are the netns lab's", () => {
    assert.deepEqual(parsed.networking, {
      kubeProxyMode: "none",
      disableDefaultCNI: true,
      podSubnet: defaultLabInput.clusterCidr,
      serviceSubnet: defaultLabInput.serviceCidr,
    });
    assert.equal(parsed.networking.podSubnet, "10.244.0.0/16");
    assert.equal(parsed.networking.serviceSubnet, "10.96.0.0/16");
  });

  test("the controller-manager runs without the upstream EndpointSlice controllers (kubeadm v1beta4 list)", () => {
    assert.equal(parsed.kubeadmConfigPatches.length, 4);
    const patch = yaml.load(parsed.kubeadmConfigPatches[0] ?? "") as {
      apiVersion: string;
      kind: string;
      controllerManager: { extraArgs: { name: string; value: string }[] };
    };
    assert.equal(patch.apiVersion, "kubeadm.k8s.io/v1beta4");
    assert.equal(patch.kind, "ClusterConfiguration");
    assert.deepEqual(patch.controllerManager.extraArgs, [
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

  test("upstream's stack: kind's kube-proxy in the chosen mode and kubeadm's controllers, the rest the same", () => {
    const upstream = yaml.load(
      renderKindConfig(input, { kind: "upstream", proxyMode: "nftables" }),
    ) as ParsedConfig;
    assert.deepEqual(upstream.networking, { ...parsed.networking, kubeProxyMode: "nftables" });
    assert.equal(upstream.kubeadmConfigPatches.length, 3);
    assert.ok(upstream.kubeadmConfigPatches.every((p) => !p.includes("controllers")));
    assert.deepEqual(upstream.kubeadmConfigPatches, parsed.kubeadmConfigPatches.slice(1));
    assert.deepEqual(upstream.nodes, parsed.nodes);
    // Switchyard's stack is the same cluster as no stack at all.
    assert.equal(
      renderKindConfig(input, { kind: "switchyard", proxyMode: "nftables" }),
      renderKindConfig(input),
    );
  });

  test("kubelet and kubeadm are let run on a cgroup v1 host (kubelet ≥ 1.35 refuses it by default)", () => {
    assert.deepEqual(yaml.load(parsed.kubeadmConfigPatches[1] ?? ""), {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      failCgroupV1: false,
    });
    for (const [i, kind] of [
      [2, "InitConfiguration"],
      [3, "JoinConfiguration"],
    ] as const)
      assert.deepEqual(yaml.load(parsed.kubeadmConfigPatches[i] ?? ""), {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind,
        nodeRegistration: { ignorePreflightErrors: ["SystemVerification"] },
      });
  });

  test("--nodes 3: one control-plane node plus three workers, zones round-robin, one node image", () => {
    assert.deepEqual(
      parsed.nodes.map((n) => [n.role, n.labels["topology.kubernetes.io/zone"]]),
      [
        ["control-plane", "zone-a"],
        ["worker", "zone-a"],
        ["worker", "zone-b"],
        ["worker", "zone-a"],
      ],
    );
    assert.ok(parsed.nodes.every((n) => n.image === `kindest/node:${readVersions().kubernetes}`));
    assert.equal(parsed.nodes[0]?.image, "kindest/node:v1.37.2");
  });

  test("node names are kind's: <name>-control-plane, <name>-worker, <name>-worker2, ...", () => {
    assert.deepEqual(
      kindNodes({ ...input, name: "lab", zones: 3 }).map((n) => `${n.name} ${n.zone}`),
      ["lab-control-plane zone-a", "lab-worker zone-a", "lab-worker2 zone-b", "lab-worker3 zone-c"],
    );
  });

  test("--node-image overrides every node's image", () => {
    const custom = yaml.load(
      renderKindConfig({ ...input, nodeImage: "kindest/node:v1.37.0" }),
    ) as ParsedConfig;
    assert.ok(custom.nodes.every((n) => n.image === "kindest/node:v1.37.0"));
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

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { readVersions } from "@switchyard/testbed/upstream";
import yaml from "js-yaml";
import { expandVars } from "../../src/agent/expand-vars.js";
import { kindEbpfMountScript, kindEbpfPlaces } from "../../src/kind/ebpf-mounts.js";
import { imagePlan } from "../../src/kind/images.js";
import {
  kindApiserver,
  kindStack,
  renderManifests,
  replacedKubeadmObjects,
} from "../../src/kind/manifests.js";
import { defaultKindInput } from "../../src/kind/options.js";
import { repoRoot } from "../../src/self.js";
import { modeDaemonSet } from "../../src/stack/canary.js";
import { type KubeObject, labProxyDaemonSet, readManifests } from "../../src/stack/manifests.js";

const input = { ...defaultKindInput(readVersions()), name: "lab" };
const original = readManifests(repoRoot);
const stack = kindStack(original, input, "nftables");
const find = (kind: string, name: string) => stack.find((o) => o.kind === kind && o.metadata.name === name);
type Workload = KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } };

describe("kind: the stack's manifests", () => {
  test("the same objects as the netns lab's, in apply order (workloads last)", () => {
    assert.deepEqual(
      stack.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      original.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
    );
    const firstWorkload = stack.findIndex((o) => o.kind === "DaemonSet" || o.kind === "Deployment");
    assert.ok(stack.slice(firstWorkload).every((o) => o.kind === "DaemonSet" || o.kind === "Deployment"));
  });

  test("exactly one kube-proxy, ours, talking to the control-plane container in the chosen mode", () => {
    const proxies = stack.filter((o) => o.kind === "DaemonSet" && o.metadata.name === "kube-proxy");
    assert.equal(proxies.length, 1);
    assert.equal(
      (proxies[0] as Workload).spec.template.spec.containers[0]?.image,
      "switchyard/kube-proxy:0.1.0",
    );
    const cm = find("ConfigMap", "kube-proxy")?.data as Record<string, string>;
    assert.match(cm["kubeconfig.conf"] ?? "", /server: https:\/\/lab-control-plane:6443$/m);
    assert.equal(kindApiserver("lab"), "https://lab-control-plane:6443");
    assert.match(cm["config.conf"] ?? "", /^mode: nftables$/m);
    assert.match(cm["config.conf"] ?? "", /^clusterCIDR: 10\.244\.0\.0\/16$/m);
  });

  test("kube-dns keeps the ClusterIP kubeadm gives the kubelets (tenth service address)", () => {
    assert.equal(
      (find("Service", "kube-dns")?.spec as { clusterIP?: string } | undefined)?.clusterIP,
      "10.96.0.10",
    );
    const other = kindStack(original, { ...input, serviceCidr: "10.100.0.0/16" }, "iptables");
    const dns = other.find((o) => o.kind === "Service" && o.metadata.name === "kube-dns");
    assert.equal((dns?.spec as { clusterIP?: string } | undefined)?.clusterIP, "10.100.0.10");
  });

  test("dual-stack: the proxy gets both pod ranges; kube-dns stays in the primary family, as kubeadm's --cluster-dns", () => {
    const dual = kindStack(
      original,
      { ...defaultKindInput(readVersions(), "dual"), name: "lab" },
      "iptables",
    );
    const cm = dual.find((o) => o.kind === "ConfigMap" && o.metadata.name === "kube-proxy")?.data as Record<
      string,
      string
    >;
    assert.match(cm["config.conf"] ?? "", /^clusterCIDR: 10\.244\.0\.0\/16,fd00:10:244::\/56$/m);
    const dns = dual.find((o) => o.kind === "Service" && o.metadata.name === "kube-dns");
    assert.equal((dns?.spec as { clusterIP?: string } | undefined)?.clusterIP, "10.96.0.10");
    const six = kindStack(original, { ...defaultKindInput(readVersions(), "ipv6"), name: "lab" }, "iptables");
    const dns6 = six.find((o) => o.kind === "Service" && o.metadata.name === "kube-dns");
    assert.equal((dns6?.spec as { clusterIP?: string } | undefined)?.clusterIP, "fd00:10:96::a");
  });

  test("kubeadm's CoreDNS Deployment is deleted before ours is applied; nothing else of kubeadm's", () => {
    assert.deepEqual(replacedKubeadmObjects, [
      { kind: "deployment", namespace: "kube-system", name: "coredns" },
    ]);
    assert.ok(find("Deployment", "coredns"), "ours has the same name");
  });

  test("the rendered file parses back to the same objects", () => {
    const docs = yaml.loadAll(renderManifests(stack)).filter(Boolean);
    assert.deepEqual(docs, stack);
  });
});

interface ProxyPod {
  hostPID?: boolean;
  containers: { name: string; command: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
  volumes: { name: string; hostPath?: { path: string; type?: string } }[];
}
const podOf = (ds: KubeObject | undefined) =>
  (ds as unknown as { spec: { template: { spec: ProxyPod } } }).spec.template.spec;
const proxyPod = (objects: readonly KubeObject[]) =>
  podOf(objects.find((o) => o.kind === "DaemonSet" && o.metadata.name === "kube-proxy"));

describe("kind: ebpf mode's places in the proxy's pod", () => {
  test("every mode: the node's cgroup2 mount as the container's cgroup root, its own bpffs, its PID namespace", () => {
    for (const mode of ["iptables", "ebpf"] as const) {
      const pod = proxyPod(kindStack(original, input, mode));
      const proxy = pod.containers.find((c) => c.name === "kube-proxy");
      assert.deepEqual(
        proxy?.command.slice(-2).map((a) => expandVars(a, { NODE_NAME: "lab-worker" })),
        ["--cgroup-root=/sys/fs/cgroup", "--bpf-root=/sys/fs/bpf/switchyard"],
        "the same paths on every node: each node has its own mounts there",
      );
      assert.deepEqual(proxy?.volumeMounts.slice(-2), [
        { name: "bpf-maps", mountPath: "/sys/fs/bpf" },
        { name: "cgroup2", mountPath: "/sys/fs/cgroup" },
      ]);
      assert.deepEqual(pod.volumes.slice(-2), [
        { name: "bpf-maps", hostPath: { path: "/sys/fs/bpf", type: "Directory" } },
        { name: "cgroup2", hostPath: { path: "/run/switchyard/cgroup2", type: "Directory" } },
      ]);
      assert.equal(pod.hostPID, true, "the socket-destroy iterator finds pods' namespaces through /proc");
    }
  });

  test("migrate's DaemonSets keep them: the lab's DaemonSet with kind's places is the one up applied", () => {
    const applied = kindStack(original, input, "iptables").find(
      (o) => o.kind === "DaemonSet" && o.metadata.name === "kube-proxy",
    );
    assert.deepEqual(labProxyDaemonSet(repoRoot, kindEbpfPlaces).spec, applied?.spec);
    const ebpf = modeDaemonSet(labProxyDaemonSet(repoRoot, kindEbpfPlaces), "ebpf");
    assert.deepEqual(podOf(ebpf).volumes.slice(-2), podOf(applied).volumes.slice(-2));
    assert.equal(podOf(ebpf).hostPID, true);
    assert.equal(proxyPod(original).hostPID, undefined, "the manifest itself asks for no host PID namespace");
  });

  test("the node's mounts: a oneshot systemd unit, enabled, ordered before the kubelet, idempotent", () => {
    const script = kindEbpfMountScript();
    assert.match(script, /^cat > \/etc\/systemd\/system\/switchyard-ebpf-mounts\.service <<'UNIT'$/m);
    assert.match(script, /^Before=kubelet\.service$/m);
    assert.match(script, /^RemainAfterExit=yes$/m);
    const mounts = script.split("\n").filter((l) => l.startsWith("ExecStart="));
    assert.deepEqual(mounts, [
      'ExecStart=/bin/sh -c "mkdir -p /sys/fs/bpf && (mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf)"',
      'ExecStart=/bin/sh -c "mkdir -p /run/switchyard/cgroup2 && (mountpoint -q /run/switchyard/cgroup2 || mount -t cgroup2 cgroup2 /run/switchyard/cgroup2)"',
    ]);
    assert.match(script, /^systemctl enable --now switchyard-ebpf-mounts\.service$/m);
  });
});

describe("kind: the image plan", () => {
  const hasDockerfile = (p: string) => existsSync(join(repoRoot, p));

  test("every switchyard image the manifests run, tagged as they name it, from its app's Dockerfile", () => {
    assert.deepEqual(imagePlan(stack, hasDockerfile), [
      { app: "kube-proxy", image: "switchyard/kube-proxy:0.1.0", dockerfile: "apps/kube-proxy/Dockerfile" },
      {
        app: "slice-controller",
        image: "switchyard/slice-controller:0.1.0",
        dockerfile: "apps/slice-controller/Dockerfile",
      },
      {
        app: "cluster-dns",
        image: "switchyard/cluster-dns:0.1.0",
        dockerfile: "apps/cluster-dns/Dockerfile",
      },
    ]);
  });

  test("the Dockerfiles expect the repository root as their context", () => {
    for (const { dockerfile } of imagePlan(stack, hasDockerfile)) {
      const text = readFileSync(join(repoRoot, dockerfile), "utf8");
      assert.match(text, /docker build -f apps\/[a-z-]+\/Dockerfile -t \S+ \./, dockerfile);
    }
  });

  test("an image without a Dockerfile is a one-line error naming the manifest", () => {
    const extra = structuredClone(stack.filter((o) => o.kind === "Deployment")[0]) as Workload;
    extra.metadata.name = "extra";
    (extra.spec.template.spec.containers[0] as { image: string }).image = "switchyard/nope:1";
    assert.throws(
      () => imagePlan([...stack, extra], hasDockerfile),
      /^Error: Deployment\/extra runs switchyard\/nope:1, but there is no apps\/nope\/Dockerfile to build it from$/,
    );
  });

  test("images from elsewhere are left to the nodes to pull; each image once", () => {
    const other = structuredClone(stack.filter((o) => o.kind === "Deployment")[0]) as Workload;
    (other.spec.template.spec.containers[0] as { image: string }).image = "registry.k8s.io/pause:3.10";
    assert.equal(imagePlan([...stack, other, ...stack], hasDockerfile).length, 3);
  });
});

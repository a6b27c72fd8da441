import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { docker, dockerEngine } from "@switchyard/testbed";
import { kindDown } from "../../src/kind/lab-down.js";
import type { KindLabState } from "../../src/kind/state.js";
import { repoRoot } from "../../src/self.js";
import { countersBetween, lastCounters, newServiceScript, trafficScript, webServer } from "./swap-traffic.js";
import { runProbe, upTestCluster } from "./test-cluster.js";

// The drop-in claim, tested: a kind cluster as kubeadm makes it (upstream's kube-proxy, CoreDNS and slice
// controllers), then only `kubectl set image` of kubeadm's kube-proxy DaemonSet and CoreDNS Deployment to ours,
// under traffic. Nothing else of kubeadm's objects changes.
const engine = dockerEngine();
const name = "sy-swap";
const podImage = "switchyard/cluster-dns:0.1.0";

interface Workload {
  spec: { template: { spec: { containers: { name: string; image: string }[] } & Record<string, unknown> } };
}

/** A workload's pod template with the images left out: what must not change in a swap. */
function templateWithoutImages(json: string): unknown {
  const w = JSON.parse(json) as Workload;
  const pod = w.spec.template.spec;
  return { ...w.spec.template, spec: { ...pod, containers: pod.containers.map(({ image: _, ...c }) => c) } };
}

describe("image swap: kubeadm's kube-proxy and CoreDNS replaced by ours with kubectl set image", {
  skip: engine.skip,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-kind-swap-"));
  let state: KindLabState;
  let kubectl: (...args: string[]) => string;
  const counters = () => {
    const c = lastCounters(kubectl("logs", "traffic", "--tail=1"));
    assert.ok(c, "the traffic pod prints its counters");
    return c;
  };
  // A check that throws counts as not yet: while the kubelet recreates a static pod, its mirror pod is
  // briefly gone and kubectl get fails with NotFound.
  const until = async (what: string, ok: () => boolean) => {
    let lastError = "";
    for (let i = 0; i < 120; i++) {
      try {
        if (ok()) return;
      } catch (err) {
        lastError = (err as Error).message.split("\n")[0] ?? "";
      }
      await sleep(1000);
    }
    throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${lastError})` : ""}`);
  };

  // Each node's legacy (x_tables) iptables tables: a node whose rules are in nf_tables has none unless some
  // program asked iptables-legacy about one (iptables-nft then warns on every save that legacy tables exist).
  const legacyTables = () =>
    Object.fromEntries(
      state.nodes.map((n) => [n.name, docker(engine, ["exec", n.name, "cat", "/proc/net/ip_tables_names"])]),
    );

  // A Service made now: kube-controller-manager writes its slice after it, and until the proxy has both the
  // ClusterIP rejects (no endpoints). So the slice is waited for, then the pod tries every 500 ms, 20 times.
  const newServiceAnswers = async (service: string, port: number) => {
    kubectl("expose", "deployment", "web", `--name=${service}`, `--port=${port}`, "--target-port=8080");
    await until(`${service}'s ready endpoints`, () =>
      /true/.test(
        kubectl(
          ...["get", "endpointslices", "-l", `kubernetes.io/service-name=${service}`],
          ...["-o", "jsonpath={.items[*].endpoints[*].conditions.ready}"],
        ),
      ),
    );
    const probe = runProbe(kubectl, `probe-${service}`, podImage, newServiceScript(service, port));
    const { tries, ...result } = probe as { tries: number };
    console.log(`# ${service} answered on try ${tries} (500 ms apart)`);
    return result;
  };

  // The EndpointSlice controller lives in kube-controller-manager: its two controllers are turned off in the
  // static pod's manifest (kubelet restarts it), then ours is applied from apps/slice-controller/deploy.
  const swapSliceController = async () => {
    const controlPlane = `${name}-control-plane`;
    const manifest = "/etc/kubernetes/manifests/kube-controller-manager.yaml";
    const off = "-endpointslice-controller,-endpointslice-mirroring-controller";
    docker(engine, [
      "exec",
      controlPlane,
      "sed",
      "-i",
      `s/--controllers=\\(.*\\)$/--controllers=\\1,${off}/`,
      manifest,
    ]);
    await until("kube-controller-manager restarted without its slice controllers", () => {
      const pod = kubectl(
        ...["-n", "kube-system", "get", "pod", `kube-controller-manager-${controlPlane}`],
        ...["-o", "jsonpath={.spec.containers[0].command} {.status.containerStatuses[0].ready}"],
      );
      return pod.includes(off) && pod.endsWith(" true");
    });
    kubectl("apply", "-f", join(repoRoot, "apps", "slice-controller", "deploy"));
    kubectl(
      "-n",
      "kube-system",
      "rollout",
      "status",
      "deployment/switchyard-slice-controller",
      "--timeout=300s",
    );
  };

  before(async () => {
    ({ state, kubectl } = await upTestCluster(engine, dir, name, "upstream"));
    console.log(`# kind up with upstream's stack in ${state.upSeconds?.toFixed(1)} s`);
  });

  after(async () => {
    await kindDown(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("the cluster runs upstream's stack: kubeadm's images, kube-controller-manager's slices", async () => {
    const images = kubectl(
      ...["-n", "kube-system", "get", "daemonset/kube-proxy", "deployment/coredns"],
      ...["-o", "jsonpath={.items[*].spec.template.spec.containers[0].image}"],
    );
    assert.deepEqual(images.split(" "), [
      "registry.k8s.io/kube-proxy:v1.37.2",
      "registry.k8s.io/coredns/coredns:v1.14.6",
    ]);
    const web = [`--image=${podImage}`, "--replicas=2", "--", "/nodejs/bin/node", "-e", webServer];
    kubectl("create", "deployment", "web", ...web);
    kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080");
    kubectl("rollout", "status", "deployment/web", "--timeout=180s");
    const managers = kubectl(
      ...["get", "endpointslices", "-l", "kubernetes.io/service-name=web", "--show-managed-fields"],
      ...["-o", "jsonpath={.items[*].metadata.managedFields[*].manager}"],
    );
    assert.match(managers, /kube-controller-manager/);
    // The anchor for the same check after the swap: upstream's DNS and proxy with a new Service.
    assert.deepEqual(await newServiceAnswers("web-before", 82), { resolved: true, answer: "web" });
  });

  test("both roll out to ours, Services and DNS keep answering, nothing else changed", async () => {
    const webIp = kubectl("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}");
    kubectl(
      ...["run", "traffic", `--image=${podImage}`, "--image-pull-policy=IfNotPresent", "--restart=Never"],
      ...["--command", "--", "/nodejs/bin/node", "-e", trafficScript("web.default.svc.cluster.local", webIp)],
    );
    kubectl("wait", "--for=condition=Ready", "pod/traffic", "--timeout=120s");
    await until("the traffic pod's first answers", () => {
      const c = lastCounters(kubectl("logs", "traffic", "--tail=1"));
      return (c?.lookups ?? 0) >= 20;
    });
    const warm = counters();
    assert.deepEqual(
      [warm.lookupFailed, warm.connectionFailed],
      [0, 0],
      `before the swap: ${JSON.stringify(warm)}`,
    );

    const before = {
      proxy: templateWithoutImages(kubectl("-n", "kube-system", "get", "daemonset/kube-proxy", "-o", "json")),
      dns: templateWithoutImages(kubectl("-n", "kube-system", "get", "deployment/coredns", "-o", "json")),
      corefile: kubectl("-n", "kube-system", "get", "configmap/coredns", "-o", "jsonpath={.data.Corefile}"),
      proxyConfig: kubectl("-n", "kube-system", "get", "configmap/kube-proxy", "-o", "json"),
      legacyTables: legacyTables(),
    };
    const setImage = (workload: string, container: string, image: string) => async () => {
      kubectl("-n", "kube-system", "set", "image", workload, `${container}=${image}`);
      kubectl("-n", "kube-system", "rollout", "status", workload, "--timeout=300s");
    };
    const swaps: [string, () => Promise<void>][] = [
      ["kube-proxy", setImage("daemonset/kube-proxy", "kube-proxy", "switchyard/kube-proxy:dev")],
      ["coredns", setImage("deployment/coredns", "coredns", "switchyard/cluster-dns:dev")],
      ["EndpointSlice controller", swapSliceController],
    ];
    for (const [what, swap] of swaps) {
      const from = counters();
      const started = Date.now();
      await swap();
      // The old pods' last seconds (CoreDNS's lameduck is 5 s) belong to the roll.
      await sleep(8000);
      const during = countersBetween(from, counters());
      console.log(
        `# swap of ${what}: ${((Date.now() - started) / 1000).toFixed(1)} s, ${JSON.stringify(during)}`,
      );
    }
    const end = counters();
    const all = countersBetween(warm, end);
    console.log(`# the whole swap: ${JSON.stringify(all)}; failures: ${end.errors.join("; ") || "none"}`);

    // Every pod of both workloads is ours now, and ready.
    for (const [selector, image] of [
      ["k8s-app=kube-proxy", "switchyard/kube-proxy:dev"],
      ["k8s-app=kube-dns", "switchyard/cluster-dns:dev"],
    ] as const) {
      const pods = JSON.parse(kubectl("-n", "kube-system", "get", "pods", "-l", selector, "-o", "json")) as {
        items: {
          metadata: { name: string; deletionTimestamp?: string };
          spec: { containers: { image: string }[] };
          status: { containerStatuses?: { ready: boolean }[] };
        }[];
      };
      const live = pods.items.filter((p) => !p.metadata.deletionTimestamp);
      assert.ok(live.length > 0, selector);
      for (const p of live) {
        assert.equal(p.spec.containers[0]?.image, image, p.metadata.name);
        assert.ok(
          p.status.containerStatuses?.every((s) => s.ready),
          `${p.metadata.name} ready`,
        );
      }
    }
    // Our proxy left the iptables backend the node does not use as upstream's did (no legacy table made).
    assert.deepEqual(legacyTables(), before.legacyTables);
    // Only the images changed: kubeadm's templates, Corefile and kube-proxy config are as kubeadm wrote them.
    assert.deepEqual(
      templateWithoutImages(kubectl("-n", "kube-system", "get", "daemonset/kube-proxy", "-o", "json")),
      before.proxy,
    );
    assert.deepEqual(
      templateWithoutImages(kubectl("-n", "kube-system", "get", "deployment/coredns", "-o", "json")),
      before.dns,
    );
    assert.equal(
      kubectl("-n", "kube-system", "get", "configmap/coredns", "-o", "jsonpath={.data.Corefile}"),
      before.corefile,
    );
    assert.equal(
      kubectl("-n", "kube-system", "get", "configmap/kube-proxy", "-o", "json"),
      before.proxyConfig,
    );
    // No request and no lookup an application would see failed during the swap.
    assert.equal(all.connectionFailed, 0, `failed requests: ${end.errors.join("; ")}`);
    assert.equal(all.lookupFailed, 0, `failed lookups: ${end.errors.join("; ")}`);
    assert.ok(all.lookups > 100 && all.connections > 100, JSON.stringify(all));
  });

  test("after the swap, a new Service is sliced by our controller, resolves through our DNS, answers through our proxy", async () => {
    assert.deepEqual(await newServiceAnswers("web-after", 81), { resolved: true, answer: "web" });
    const managers = kubectl(
      ...["get", "endpointslices", "-l", "kubernetes.io/service-name=web-after", "--show-managed-fields"],
      ...["-o", "jsonpath={.items[*].metadata.managedFields[*].manager}"],
    );
    assert.match(managers, /switchyard-slice-controller/);
    assert.doesNotMatch(managers, /kube-controller-manager/);
  });
});

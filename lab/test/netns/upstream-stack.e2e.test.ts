import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { HttpRestClient } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { DaemonSet, Deployment } from "kubernetes-types/apps/v1.js";
import type { ConfigMap, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { writtenByOurController, writtenByUpstream } from "../../src/stack/deploy.js";
import { sh, shIn, stackLabSkip, upTestLab } from "./test-lab.js";

// `--stack upstream` on the netns runtime: kubeadm's own addons, run by the node agents from
// packages/testbed/upstream's binaries, and kube-controller-manager's slice controllers. Its own prefix and
// networks.
const lab = { prefix: "syu", nodes: 2, zones: 2, nodeCidr: "198.18.20.0/24", clusterCidr: "10.252.0.0/16" };
const skip = stackLabSkip(["kube-proxy", "coredns", "kubeadm"]);

describe("--stack upstream on the netns runtime: kubeadm's addons from the pinned release", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  const ns = "upstream-e2e";
  let webPod = "";
  let webNetns = "";

  const get = <T>(path: string) => client.call<T>("GET", path);
  const dig = (name: string) =>
    shIn(webNetns, ["dig", `@${state.plan.dnsIp}`, "+time=2", "+tries=3", name]).trim();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-upstream-"));
    state = await upTestLab(dir, lab, { stack: "nftables", stackKind: "upstream", readyTimeoutMs: 240_000 });
    console.log(
      `# upstream's stack up in ${state.upSeconds?.toFixed(1)}s (its addons ${state.stack?.seconds}s)`,
    );
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      get(`/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
    const labels = { app: "web" };
    await client.call("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "echo", image: "switchyard/echo" }] },
        },
      },
    });
    for (const [name, selector] of [
      ["web", labels],
      ["empty", { app: "nothing" }],
    ] as const)
      await client.call("POST", `/api/v1/namespaces/${ns}/services`, {
        metadata: { name },
        spec: { selector, ports: [{ port: 9000, targetPort: 9000, protocol: "TCP" }] },
      });
    const pod = await eventually("the web pod ready", async () => {
      const list = await get<{ items: Pod[] }>(`/api/v1/namespaces/${ns}/pods`);
      return list.items.find((p) =>
        p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
    });
    webPod = pod.metadata?.name ?? "";
    webNetns =
      sh(["ip", "netns", "list"])
        .split("\n")
        .map((l) => l.split(" ")[0] ?? "")
        .find(
          (n) => n.startsWith(`${lab.prefix}-pod-`) && n.endsWith(`-${pod.metadata?.uid?.slice(0, 8)}`),
        ) ?? "";
    assert.ok(webNetns, "the web pod's namespace");
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("kubeadm's kube-proxy and CoreDNS run, in the mode asked for, and kcm writes the slices", async () => {
    const ds = await get<DaemonSet>("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy");
    const proxy = ds.spec?.template.spec?.containers[0];
    assert.match(proxy?.image ?? "", /^registry\.k8s\.io\/kube-proxy:v1\.37\.2$/);
    assert.deepEqual(proxy?.command?.[0], "/usr/local/bin/kube-proxy");
    assert.equal(ds.status?.numberReady, lab.nodes);
    const cm = await get<ConfigMap>("/api/v1/namespaces/kube-system/configmaps/kube-proxy");
    assert.match(cm.data?.["config.conf"] ?? "", /^mode: nftables$/m);
    for (const n of state.plan.nodeList)
      assert.match(
        shIn(n.netns, ["nft", "list", "chains", "ip"]),
        /table ip kube-proxy/,
        `${n.name}'s table`,
      );
    const dns = await get<Deployment>("/apis/apps/v1/namespaces/kube-system/deployments/coredns");
    assert.match(
      dns.spec?.template.spec?.containers[0]?.image ?? "",
      /^registry\.k8s\.io\/coredns\/coredns:/,
    );
    const slices = await get<{ items: EndpointSlice[] }>(
      "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkube-dns",
    );
    assert.ok(slices.items.length > 0 && slices.items.every(writtenByUpstream), "kcm's slices for kube-dns");
    assert.ok(!slices.items.some(writtenByOurController), "none of ours");
  });

  test("a pod reaching its own Service is answered by itself (hairpin through the node's bridge)", async () => {
    const svc = await get<Service>(`/api/v1/namespaces/${ns}/services/web`);
    const ip = svc.spec?.clusterIP ?? "";
    const answer = await eventually("the pod's own answer through its ClusterIP", async () => {
      const out = shIn(webNetns, [
        "timeout",
        "3",
        "bash",
        "-c",
        `exec 3<>/dev/tcp/${ip}/9000 && head -1 <&3`,
      ]);
      return out.trim() || undefined;
    });
    assert.match(answer, new RegExp(`^${webPod} `), "the only endpoint, itself");
  });

  test("DNS through kubeadm's CoreDNS: a Service, a Service without endpoints, a missing name", async () => {
    const ipOf = async (name: string) =>
      (await get<Service>(`/api/v1/namespaces/${ns}/services/${name}`)).spec?.clusterIP ?? "";
    for (const name of ["web", "empty"]) {
      const out = await eventually(`${name}'s A record`, async () => {
        const answer = dig(`${name}.${ns}.svc.cluster.local`);
        return answer.includes("status: NOERROR") ? answer : undefined;
      });
      assert.match(
        out,
        new RegExp(
          `^${name}\\.${ns}\\.svc\\.cluster\\.local\\.\\s+\\d+\\s+IN\\s+A\\s+${(await ipOf(name)).replaceAll(".", "\\.")}$`,
          "m",
        ),
      );
    }
    assert.match(dig(`nope.${ns}.svc.cluster.local`), /status: NXDOMAIN/);
  });
});

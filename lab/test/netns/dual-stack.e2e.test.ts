import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cidrContainsText as contains, familyOf } from "@switchyard/basics";
import type { HttpRestClient } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { sliceChurn } from "../../src/scenarios/slice-churn/slice-churn.js";
import { writtenByOurController } from "../../src/stack/deploy.js";
import { finding, runScenario } from "../scenarios/harness.js";
import { echoAndClient, labNetns, sh, shIn, stackLabSkip, upTestLab } from "./test-lab.js";

// `up --ip-family dual` with its own prefix and networks (one range per family), so other labs are left alone.
const lab = {
  prefix: "sydual",
  nodes: 2,
  zones: 1,
  ipFamily: "dual" as const,
  nodeCidr: "198.18.44.0/24,fd00:198:18:44::/64",
  clusterCidr: "10.245.0.0/16,fd00:10:245::/56",
  serviceCidr: "10.96.0.0/16,fd00:10:96::/112",
};
const skip = stackLabSkip();
const ns = "dual-e2e";

const ourNetns = () => labNetns(lab.prefix);

describe("a dual-stack lab (up --ip-family dual)", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  let clientNetns = "";
  let clientIps: string[] = [];

  /** The first line an echo server answers over TCP at ip:port from the client pod (bash's /dev/tcp takes IPv6 too). */
  const tcpAnswer = (ip: string, port: number) =>
    eventually(`an answer from ${ip} port ${port}`, async () => {
      const out = shIn(clientNetns, [
        ...["timeout", "3", "bash", "-c"],
        `exec 3<>/dev/tcp/${ip}/${port} && head -1 <&3`,
      ]).trim();
      return out.startsWith("echo-") ? out : undefined;
    });
  const dig = (type: "A" | "AAAA", name: string) =>
    eventually(`${type} ${name}`, async () => {
      const out = shIn(clientNetns, [
        "dig",
        `@${state.plan.dnsIp}`,
        "+short",
        "+time=2",
        "+tries=1",
        type,
        name,
      ]);
      return out.trim() || undefined;
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-dual-"));
    state = await upTestLab(dir, lab, { stack: "iptables", readyTimeoutMs: 240_000 });
    console.log(`# dual-stack lab with the stack up in ${state.upSeconds?.toFixed(1)}s`);
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    const started = await echoAndClient(client, lab.prefix, ns, { ipFamilyPolicy: "RequireDualStack" });
    clientIps = (started.pod.status?.podIPs ?? []).map((p) => p.ip ?? "");
    clientNetns = started.netns;
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("every node has an InternalIP and a pod CIDR per family; pods get an address from each", async () => {
    const nodes = (await client.call<{ items: Node[] }>("GET", "/api/v1/nodes")).items;
    for (const n of nodes) {
      const internal = (n.status?.addresses ?? [])
        .filter((a) => a.type === "InternalIP")
        .map((a) => a.address);
      assert.deepEqual(internal.map(familyOf), ["IPv4", "IPv6"], `${n.metadata?.name} InternalIPs`);
      assert.deepEqual(
        (n.spec?.podCIDRs ?? []).map(familyOf),
        ["IPv4", "IPv6"],
        `${n.metadata?.name} podCIDRs`,
      );
    }
    const pods = await eventually("the echo pods running", async () => {
      const now = (
        await client.call<{ items: Pod[] }>("GET", `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Decho`)
      ).items;
      return now.filter((p) => p.status?.phase === "Running").length === 2 ? now : undefined;
    });
    for (const p of [
      ...pods,
      { spec: { nodeName: "" }, status: { podIPs: clientIps.map((ip) => ({ ip })) } },
    ]) {
      const ips = (p.status?.podIPs ?? []).map((x) => x.ip ?? "");
      assert.deepEqual(ips.map(familyOf), ["IPv4", "IPv6"], `pod IPs ${ips.join(" ")}`);
      const node = nodes.find((n) => n.metadata?.name === p.spec?.nodeName);
      if (node)
        for (const [i, ip] of ips.entries())
          assert.ok(contains(node.spec?.podCIDRs?.[i] ?? "", ip), `${ip} in its node's CIDR`);
    }
  });

  test("a RequireDualStack Service answers on both ClusterIPs from a pod, each family from the client's own address", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const [v4, v6] = svc.spec?.clusterIPs ?? [];
    assert.equal(familyOf(v4 ?? ""), "IPv4");
    assert.equal(familyOf(v6 ?? ""), "IPv6");
    assert.ok(contains("fd00:10:96::/112", v6 ?? ""), v6);
    // The echo server names the peer: the client pod's IPv4 address for one, its IPv6 address for the other.
    assert.match(await tcpAnswer(v4 ?? "", 9000), new RegExp(`^echo-\\S+ (::ffff:)?${clientIps[0]}:`));
    assert.match(await tcpAnswer(v6 ?? "", 9000), new RegExp(`^echo-\\S+ ${clientIps[1]}:`));
    // Each family's rules are the proxy's own: iptables for one, ip6tables for the other.
    const node = state.plan.nodeList[0];
    assert.ok(node);
    assert.match(shIn(node.netns, ["iptables-save", "-t", "nat"]), new RegExp(`-d ${v4}/32 .*dual-e2e/echo`));
    assert.match(
      shIn(node.netns, ["ip6tables-save", "-t", "nat"]),
      new RegExp(`-d ${v6}/128 .*dual-e2e/echo`),
    );
  });

  test("the NodePort answers on another node's IPv6 address", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const port = svc.spec?.ports?.[0]?.nodePort ?? 0;
    const other = state.plan.nodeList[1];
    assert.ok(port > 0 && other);
    assert.match(await tcpAnswer(other.ips[1] ?? "", port), /^echo-/);
  });

  test("our slice controller cuts one slice per address family; DNS answers A and AAAA", async () => {
    const slices = await eventually("a slice per family with both endpoints", async () => {
      const l = await client.call<{ items: EndpointSlice[] }>(
        "GET",
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Decho`,
      );
      const full = l.items.filter((s) => (s.endpoints ?? []).length === 2);
      return full.length === 2 ? l.items : undefined;
    });
    assert.deepEqual(slices.map((s) => s.addressType).sort(), ["IPv4", "IPv6"]);
    assert.ok(slices.every(writtenByOurController));
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const name = `echo.${ns}.svc.cluster.local`;
    assert.equal(await dig("A", name), svc.spec?.clusterIPs?.[0]);
    assert.equal(await dig("AAAA", name), svc.spec?.clusterIPs?.[1]);
    // kube-dns itself is single-stack in the primary family, as kubeadm's is.
    assert.equal(state.plan.dnsIp, "10.96.0.10");
  });

  test("slice-churn in a dual-stack lab: a RequireDualStack Service gets one set of slices per family (C3)", async () => {
    const pods = 250;
    const c3Pods = 150;
    const r = await runScenario(dir, sliceChurn, { pods: String(pods), "c3-pods": String(c3Pods) });
    const c3 = finding(r, "C3");
    const dual =
      /one RequireDualStack Service over (\d+) pods: (\d+) IPv4 slice\(s\) with (\d+) endpoints and (\d+) IPv6 slice\(s\) with (\d+)/.exec(
        c3.measured,
      );
    assert.ok(dual, c3.measured);
    // The C3 pods, less the one the scenario deleted if it was one of them.
    const n = Number(dual[1]);
    assert.ok(n >= c3Pods - 1 && n <= c3Pods, `${n} pods`);
    const perFamily = Math.ceil(n / 100);
    assert.deepEqual(dual.slice(2).map(Number), [perFamily, n, perFamily, n]);
    assert.match(c3.note ?? "", /one set of slices per address family/);
    // The single-stack Services of the same pods stay in the primary family.
    const big = r.lines.find((l) => l.trim().startsWith("churn:"));
    assert.ok(big && !big.includes("IPv6"), big);
  });

  test("down leaves no namespace, link or route of the lab", async () => {
    client.close();
    await labDown(dir);
    assert.deepEqual(ourNetns(), []);
    assert.ok(!sh(["ip", "link", "show"]).includes(`${lab.prefix}-`), "no links");
    assert.ok(!sh(["ip", "-6", "route", "show"]).includes("fd00:10:245:"), "no IPv6 pod routes");
    assert.ok(!sh(["ip", "route", "show"]).includes("10.245."), "no IPv4 pod routes");
  });
});

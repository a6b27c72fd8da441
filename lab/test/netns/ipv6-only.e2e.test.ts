import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cidrContainsText as contains, familyOf } from "@switchyard/basics";
import type { HttpRestClient } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { writtenByOurController } from "../../src/stack/deploy.js";
import { echoAndClient, labNetns, sh, shIn, stackLabSkip, upTestLab } from "./test-lab.js";

// `up --ip-family ipv6`: every address of the lab is IPv6. The stack gets Ready only if each of its servers
// answers its probes on the pod's IPv6 address: the slice controller's health server and cluster DNS bind the
// unspecified address, which (as Go's listener does for kcm and CoreDNS) must take both families.
const lab = {
  prefix: "sysix",
  nodes: 2,
  zones: 1,
  ipFamily: "ipv6" as const,
  nodeCidr: "fd00:198:18:66::/64",
  clusterCidr: "fd00:10:246::/56",
  serviceCidr: "fd00:10:97::/112",
};
const skip = stackLabSkip();
const ns = "ipv6-e2e";

describe("an IPv6-only lab (up --ip-family ipv6)", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  let clientNetns = "";

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-ipv6-"));
    // labUp returns once the stack's DaemonSets and Deployments are Ready: their probes passed over IPv6.
    state = await upTestLab(dir, lab, { stack: "nftables", readyTimeoutMs: 240_000 });
    console.log(`# IPv6-only lab with the stack up in ${state.upSeconds?.toFixed(1)}s`);
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    clientNetns = (await echoAndClient(client, lab.prefix, ns)).netns;
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("the stack's pods are Ready on IPv6 addresses only", async () => {
    const pods =
      (await client.call<{ items: Pod[] | null }>("GET", "/api/v1/namespaces/kube-system/pods")).items ?? [];
    const stack = pods.filter((p) =>
      /^(coredns|switchyard-slice-controller|kube-proxy)/.test(p.metadata?.name ?? ""),
    );
    assert.ok(
      stack.some((p) => p.metadata?.name?.startsWith("coredns")),
      "DNS pods listed",
    );
    for (const p of stack) {
      const ready = p.status?.conditions?.find((c) => c.type === "Ready")?.status;
      assert.equal(ready, "True", `${p.metadata?.name} Ready`);
      const ips = (p.status?.podIPs ?? []).map((x) => x.ip ?? "");
      assert.deepEqual(ips.map(familyOf), ["IPv6"], `${p.metadata?.name}: ${ips.join(" ")}`);
    }
  });

  test("a pod reaches the Service's IPv6 ClusterIP, and DNS at an IPv6 address answers its AAAA", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const ip = svc.spec?.clusterIP ?? "";
    assert.ok(contains(lab.serviceCidr, ip), ip);
    assert.equal(familyOf(state.plan.dnsIp), "IPv6");
    const answer = await eventually(`an answer from [${ip}]:9000`, async () => {
      const out = shIn(clientNetns, [
        ...["timeout", "3", "bash", "-c"],
        `exec 3<>/dev/tcp/${ip}/9000 && head -1 <&3`,
      ]).trim();
      return out.startsWith("echo-") ? out : undefined;
    });
    assert.match(answer, /^echo-/);
    const aaaa = await eventually("AAAA from cluster DNS", async () => {
      const out = shIn(clientNetns, [
        ...["dig", `@${state.plan.dnsIp}`, "+short", "+time=2", "+tries=1", "AAAA"],
        `echo.${ns}.svc.cluster.local`,
      ]).trim();
      return out || undefined;
    });
    assert.equal(aaaa, ip);
    const slices = await eventually("an IPv6 slice with both endpoints", async () => {
      const l = await client.call<{ items: EndpointSlice[] | null }>(
        "GET",
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Decho`,
      );
      const items = l.items ?? [];
      return items.some((s) => (s.endpoints ?? []).length === 2) ? items : undefined;
    });
    assert.deepEqual(
      slices.map((s) => s.addressType),
      ["IPv6"],
    );
    assert.ok(slices.every(writtenByOurController));
  });

  test("down leaves no namespace or link of the lab", async () => {
    client.close();
    await labDown(dir);
    assert.deepEqual(labNetns(lab.prefix), []);
    assert.ok(!sh(["ip", "link", "show"]).includes(`${lab.prefix}-`), "no links");
  });
});

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, Peer } from "../../src/plugin/handler.js";
import type { Setup } from "../../src/plugin/setup.js";
import { kubernetesAutoPath } from "../../src/plugins/kubernetes/autopath.js";
import { FixtureCluster } from "../../src/plugins/kubernetes/cluster-view.js";
import { defaultOptions } from "../../src/plugins/kubernetes/options.js";
import { defaultRegistry } from "../../src/registry.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { askFull } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

// `autopath @kubernetes` with a fake pod index: the client's address is a pod's, which a real dig from
// 127.0.0.1 never is. Pods 10.0.0.0/8, ClusterIPs 172.30.0.0/16, as in the kubernetes fixture.
const pod = (namespace: string, name: string, ip: string, extra: string[] = []): Pod => ({
  metadata: { namespace, name },
  status: { podIP: ip, podIPs: [ip, ...extra].map((a) => ({ ip: a })) },
});

const cluster = new FixtureCluster({
  namespaces: ["app", "other"],
  services: [
    {
      metadata: { namespace: "app", name: "web" },
      spec: { type: "ClusterIP", clusterIP: "172.30.0.5", clusterIPs: ["172.30.0.5"], ports: [{ port: 80 }] },
    },
  ],
  pods: [pod("app", "client-a", "10.0.0.5"), pod("other", "client-o", "10.0.0.6", ["fd00::6"])],
});

const dir = mkdtempSync(join(tmpdir(), "autopath-k8s-"));
const HOST_RESOLV = join(dir, "resolv.conf");
writeFileSync(HOST_RESOLV, "search Corp.Test\n");

const peer = (address: string): Peer => ({
  address,
  port: 40000,
  family: address.includes(":") ? "IPv6" : "IPv4",
});

/** One `cluster.local` block with the fake cluster, the host resolv.conf above, and `backend` as forward. */
function chain(podMode: string) {
  const registry = new Map<string, Setup>(defaultRegistry() as Map<string, Setup>);
  const backend: Handler = staticZone(["site.corp.test. 60 IN A 192.0.2.7"]);
  registry.set("forward", () => ({ plugin: () => backend }));
  const corefile = `.:53 {\n autopath @kubernetes\n kubernetes cluster.local {\n  pods ${podMode}\n }\n forward\n}\n`;
  const metrics = new Metrics();
  const built = buildConfig(parseCorefile(corefile, { env: {} }), {
    registry,
    deps: { metrics, cluster, resolvConf: HOST_RESOLV },
  });
  return { sites: built.servers[0]?.sites ?? [], metrics };
}

describe("autopath @kubernetes", () => {
  test("the search path is the client pod's: its namespace, svc, the zone, the host's list, the bare name", () => {
    const opts = defaultOptions(["cluster.local.", "."]);
    opts.podMode = "verified";
    const searchOf = kubernetesAutoPath(cluster, opts, ["corp.test."]);
    assert.deepEqual(searchOf({ name: "x.other.svc.cluster.local.", remote: peer("10.0.0.6") }), [
      "other.svc.cluster.local.",
      "svc.cluster.local.",
      "cluster.local.",
      "corp.test.",
      "",
    ]);
    assert.deepEqual(searchOf({ name: "x.example.", remote: peer("10.0.0.6") }), [
      "other.svc.",
      "svc.",
      ".",
      "corp.test.",
      "",
    ]);
    // Not a pod; a pod's second address (CoreDNS indexes status.podIP only).
    assert.equal(searchOf({ name: "x.cluster.local.", remote: peer("127.0.0.1") }), undefined);
    assert.equal(searchOf({ name: "x.cluster.local.", remote: peer("fd00::6") }), undefined);
    opts.podMode = "insecure";
    assert.equal(searchOf({ name: "x.other.svc.cluster.local.", remote: peer("10.0.0.6") }), undefined);
  });

  test("a short name from another namespace resolves through the pod's search path", async () => {
    const { sites, metrics } = chain("verified");
    const reply = await askFull(sites, newQuery("web.app.other.svc.cluster.local.", 1), peer("10.0.0.6"));
    assert.deepEqual(reply?.answer.map(formatRecord), [
      "web.app.other.svc.cluster.local. 5 IN CNAME web.app.svc.cluster.local.",
      "web.app.svc.cluster.local. 5 IN A 172.30.0.5",
    ]);
    assert.match(await metrics.text(), /coredns_autopath_success_total\{server="dns:\/\/:53"\} 1/);
  });

  test("the host's search list comes after the cluster's, before the bare name", async () => {
    const { sites } = chain("verified");
    const reply = await askFull(sites, newQuery("site.app.svc.cluster.local.", 1), peer("10.0.0.5"));
    assert.deepEqual(reply?.answer.map(formatRecord), [
      "site.app.svc.cluster.local. 60 IN CNAME site.corp.test.",
      "site.corp.test. 60 IN A 192.0.2.7",
    ]);
  });

  test("without pods verified, or from an address no pod has, nothing is autopathed", async () => {
    for (const [mode, client] of [
      ["insecure", "10.0.0.6"],
      ["verified", "127.0.0.1"],
    ] as const) {
      const { sites } = chain(mode);
      const reply = await askFull(sites, newQuery("web.app.other.svc.cluster.local.", 1), peer(client));
      assert.equal(reply?.rcode, 3, `${mode} from ${client}`);
      assert.deepEqual(reply?.answer, []);
    }
  });
});

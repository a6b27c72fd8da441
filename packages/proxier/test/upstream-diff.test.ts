// The proof that our rules are upstream's: the golden cluster is created in a real API
// server, the real kube-proxy v1.37.2 programs a network namespace from it, our renderer's
// output is loaded into a second namespace by the real iptables-restore / nft, and the two
// dumps must match after canonical sorting. Skipped without root or the upstream binaries.
import assert from "node:assert/strict";
import type { Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/lab/testing";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { renderIPTables } from "../src/iptables/render.js";
import { LOCALHOST_NODEPORTS_NFACCT } from "../src/iptables/service-rules.js";
import { CT_STATE_INVALID_NFACCT, ensureCanaryChains, ensureJumpChains } from "../src/iptables/skeleton.js";
import { renderNFTables } from "../src/nftables/render.js";
import {
  allServiceCIDRs,
  type ServiceCIDRObject,
  serviceCIDRsOfFamily,
} from "../src/proxier/service-cidrs.js";
import { buildMaps, iptOptions, NODE_IP, NODE_NAME, nftOptions } from "./fixtures.js";
import { goldenServices, goldenSlices } from "./golden-cluster.js";
import { sortIPTables } from "./ipt-helpers.js";
import { lineDiff } from "./nft-helpers.js";
import { canonicalNFTList } from "./nft-list.js";
import * as H from "./upstream-harness.js";

const SERVICE_CIDR = "10.96.0.0/16"; // the lab API server's range
const CLUSTER_CIDR = "10.180.0.0/16";
const clusterIP = (n: number) => `10.96.0.${n}`;
const skip = H.missingUpstream() ?? missingControlPlane();
const tag = `${process.pid % 100000}`;

async function createCluster(api: H.ApiClient): Promise<void> {
  await api.call("POST", "/api/v1/nodes", {
    metadata: { name: NODE_NAME, labels: { "topology.kubernetes.io/zone": "zone-a" } },
  });
  const node = (await api.call("GET", `/api/v1/nodes/${NODE_NAME}`)) as { status?: object };
  await api.call("PUT", `/api/v1/nodes/${NODE_NAME}/status`, {
    ...node,
    status: { ...node.status, addresses: [{ type: "InternalIP", address: NODE_IP }] },
  });
  const services = goldenServices(clusterIP);
  for (const ns of new Set(services.map((s) => s.metadata?.namespace ?? ""))) {
    await api.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  }
  for (const svc of services) {
    const ns = svc.metadata?.namespace ?? "";
    const created = (await api.call("POST", `/api/v1/namespaces/${ns}/services`, {
      ...svc,
      status: undefined,
    })) as Service;
    if (svc.status) {
      await api.call("PUT", `/api/v1/namespaces/${ns}/services/${svc.metadata?.name}/status`, {
        ...created,
        status: svc.status,
      });
    }
  }
  for (const slice of goldenSlices()) {
    await api.call(
      "POST",
      `/apis/discovery.k8s.io/v1/namespaces/${slice.metadata?.namespace}/endpointslices`,
      slice,
    );
  }
}

/** Everything the API server holds, as kube-proxy's informers see it. */
async function readCluster(api: H.ApiClient): Promise<{ services: Service[]; slices: EndpointSlice[] }> {
  const services = ((await api.call("GET", "/api/v1/services")) as { items: Service[] }).items;
  const slices = (
    (await api.call("GET", "/apis/discovery.k8s.io/v1/endpointslices")) as { items: EndpointSlice[] }
  ).items;
  return { services, slices };
}

/**
 * kube-proxy walks its services in Go map order, so the per-service rules in the dispatch
 * chains come in a random order on every sync. Those rules match disjoint destinations, so
 * their order carries no meaning: sort them, keeping the NodePort tail call last (its place
 * does matter) and the order of rules that share a destination.
 */
function sortDispatchChains(lines: string[]): string[] {
  const dispatch = /^-A (KUBE-SERVICES|KUBE-NODEPORTS|KUBE-EXTERNAL-SERVICES|KUBE-PROXY-FIREWALL) /;
  const out = [...lines];
  let i = 0;
  while (i < out.length) {
    const chain = dispatch.exec(out[i] ?? "")?.[1];
    if (!chain) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && (out[j] ?? "").startsWith(`-A ${chain} `)) j++;
    const block = out.slice(i, j);
    const tail = block.filter((l) => l.includes("NOTE: this must be the last rule"));
    const rest = block.filter((l) => !tail.includes(l)).sort();
    out.splice(i, j - i, ...rest, ...tail);
    i = j;
  }
  return out;
}

/** Replaces the endpoints of one EndpointSlice, as an EndpointSlice controller would. */
async function setEndpoints(api: H.ApiClient, ns: string, slice: string, ips: Record<string, string>) {
  const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${slice}`;
  const current = (await api.call("GET", path)) as EndpointSlice;
  const endpoints = Object.entries(ips).map(([ip, nodeName]) => ({ addresses: [ip], nodeName }));
  await api.call("PUT", path, { ...current, endpoints });
}

function report(name: string, expected: string[], actual: string[]): void {
  if (expected.join("\n") === actual.join("\n")) return;
  const diff = lineDiff(expected, actual)
    .split("\n")
    .filter((l) => !l.startsWith("  "))
    .join("\n");
  assert.fail(`${name}: ours (+) differs from kube-proxy v1.37.2 (-):\n${diff}`);
}

describe("upstream kube-proxy v1.37.2 diff", { skip, timeout: 300_000 }, () => {
  let cp: TestControlPlane | undefined;
  let api: H.ApiClient;
  const cleanups: (() => unknown)[] = [];

  before(async () => {
    cp = await startControlPlane();
    api = H.apiClient(cp.server, join(cp.stateDir, "pki"));
    await createCluster(api);
  });

  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    await cp?.stop();
  });

  /** `label` names the namespaces of one run; `extraArgs` come after the common flags. */
  async function runRealKubeProxy(
    mode: "iptables" | "nftables",
    subnet: number,
    extraArgs: readonly string[] = [],
    label: string = mode.slice(0, 3),
  ): Promise<{ dump: string; next: (marker: string) => Promise<string> }> {
    const ns = `sy-kp-${label}-${tag}`;
    H.deleteNetns(ns);
    cleanups.push(() => H.deleteNetns(ns));
    H.createNetns(ns);
    const hostIP = H.linkToHost(ns, `syk${label}${tag}`.slice(0, 15), subnet, NODE_IP);
    const apiURL = new URL(cp?.server ?? "");
    const forwarder: Server = await H.startForwarder(hostIP, {
      host: apiURL.hostname,
      port: Number(apiURL.port),
    });
    cleanups.push(() => new Promise((r) => forwarder.close(r)));
    const port = (forwarder.address() as { port: number }).port;
    const kubeconfig = H.kubeconfigVia(cp?.kubeconfigPath ?? "", `https://${hostIP}:${port}`);
    const kp = H.startKubeProxy(ns, [
      `--kubeconfig=${kubeconfig}`,
      `--proxy-mode=${mode}`,
      `--hostname-override=${NODE_NAME}`,
      `--cluster-cidr=${CLUSTER_CIDR}`,
      // the namespace has its own loopback, so the default ports cannot clash (port 0 is refused)
      "--metrics-bind-address=127.0.0.1:10249",
      "--healthz-bind-address=127.0.0.1:10256",
      // conntrack sysctls are global, not per namespace: leave them alone
      "--conntrack-max-per-core=0",
      "--v=2",
      ...extraArgs,
    ]);
    cleanups.push(() => kp.stop());
    const dump =
      mode === "iptables"
        ? () => H.inNetns(ns, ["iptables-save"])
        : () => H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
    const marker = mode === "iptables" ? "ns9/svc9:dns cluster IP" : "ns9/svc9/udp/dns";
    /** The dump once it contains `text` and has settled. */
    const settled = async (text: string): Promise<string> => {
      try {
        return await H.waitForStableDump(
          dump,
          (t) => {
            if (kp.process.exitCode !== null)
              throw new Error(`kube-proxy exited with ${kp.process.exitCode}`);
            return t.includes(text);
          },
          90_000,
        );
      } catch (e) {
        const { readFileSync } = await import("node:fs");
        throw new Error(
          `${(e as Error).message}\nkube-proxy log:\n${readFileSync(kp.logPath, "utf8").slice(-4000)}`,
        );
      }
    };
    return { dump: await settled(marker), next: settled };
  }

  /** A fresh namespace holding our iptables rules, set up as the backend would; its name. */
  function loadOursIPTables(label: string, restore: string, nfacct: boolean): string {
    const ns = `sy-ours-${label}-${tag}`;
    H.deleteNetns(ns);
    cleanups.push(() => H.deleteNetns(ns));
    H.createNetns(ns);
    const ipt = {
      ensureChain: (table: string, chain: string) => {
        try {
          H.inNetns(ns, ["iptables", "-w", "-t", table, "-N", chain]);
        } catch {
          // exists
        }
      },
      ensureRule: (_pos: string, table: string, chain: string, args: readonly string[]) => {
        try {
          H.inNetns(ns, ["iptables", "-w", "-t", table, "-C", chain, ...args]);
        } catch {
          H.inNetns(ns, ["iptables", "-w", "-t", table, "-I", chain, ...args]);
        }
      },
    };
    // kube-proxy creates its nfacct counters over netlink; rules naming a missing one fail
    if (nfacct)
      for (const name of [LOCALHOST_NODEPORTS_NFACCT, CT_STATE_INVALID_NFACCT])
        H.inNetns(ns, ["nfacct", "add", name]);
    ensureCanaryChains(ipt);
    ensureJumpChains(ipt);
    H.inNetns(ns, ["iptables-restore", "-w", "--noflush", "--counters"], restore);
    return ns;
  }

  /** A fresh namespace holding our nft script, sent as the applier sends it; its name. */
  function loadOursNFT(label: string, script: string): string {
    const ns = `sy-ours-${label}-${tag}`;
    H.deleteNetns(ns);
    cleanups.push(() => H.deleteNetns(ns));
    H.createNetns(ns);
    H.inNetns(ns, ["nft", "-f", "-"], script);
    return ns;
  }

  test("iptables mode", async () => {
    const kp = await runRealKubeProxy("iptables", 201);
    const real = kp.dump;
    const { services, slices } = await readCluster(api);
    // nfacct counters exist only when the kernel has nfnetlink_acct; take that from the real run.
    const nfacct = real.includes("--nfacct-name");
    const options = iptOptions("IPv4", {
      localDetector: { mode: "ClusterCIDR", cidr: CLUSTER_CIDR },
      nfacctCounters: { localhostNodePortsAccepted: nfacct, ctStateInvalidDropped: nfacct },
    });
    const result = renderIPTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });

    const ns = loadOursIPTables("ipt", result.restore, nfacct);
    const ours = H.inNetns(ns, ["iptables-save"]);
    report("iptables-save", sortDispatchChains(sortIPTables(real)), sortDispatchChains(sortIPTables(ours)));

    // Partial-sync round: one endpoint of svc1 moves; kube-proxy resyncs only that service,
    // and so do we, from the state of our first sync.
    await setEndpoints(api, "ns1", "svc1-a", { "10.180.0.1": NODE_NAME, "10.180.1.31": "node2" });
    const realAfter = await kp.next("10.180.1.31");
    const after = await readCluster(api);
    const partial = renderIPTables(
      options,
      { ...buildMaps("IPv4", after.services, after.slices), changedServices: new Set(["ns1/svc1"]), now: 1 },
      result.state,
    );
    assert.equal(partial.fullSync, false);
    H.inNetns(ns, ["iptables-restore", "-w", "--noflush", "--counters"], partial.restore);
    const oursAfter = H.inNetns(ns, ["iptables-save"]);
    report(
      "iptables-save after a partial sync",
      sortDispatchChains(sortIPTables(realAfter)),
      sortDispatchChains(sortIPTables(oursAfter)),
    );
  });

  test("nftables mode", async () => {
    const kp = await runRealKubeProxy("nftables", 202);
    const real = kp.dump;
    const { services, slices } = await readCluster(api);
    // ServiceCIDRs as the app gets them: every object the API server holds, this family's share.
    const cidrObjects = (
      (await api.call("GET", "/apis/networking.k8s.io/v1/servicecidrs")) as { items: ServiceCIDRObject[] }
    ).items;
    const serviceCIDRs = serviceCIDRsOfFamily(allServiceCIDRs(cidrObjects), "IPv4").cidrs;
    assert.deepEqual(serviceCIDRs, [SERVICE_CIDR]);
    const options = nftOptions("IPv4", {
      localDetector: { mode: "ClusterCIDR", cidr: CLUSTER_CIDR },
      serviceCIDRs,
    });
    const result = renderNFTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });

    const ns = loadOursNFT("nft", result.transaction.script());
    const ours = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
    // The only normalisation is order: kube-proxy adds per-service objects in Go map order, and
    // nft lists set elements in hash order; canonicalNFTList sorts both and keeps rule order.
    report("nft list table ip kube-proxy", canonicalNFTList(real), canonicalNFTList(ours));

    // Partial-sync round: svc9 loses two endpoints and gains a local one, so its DNAT map
    // shrinks to an inline DNAT and the hairpin set changes; only svc9 is rewritten.
    await setEndpoints(api, "ns9", "svc9-a", { "10.180.0.39": NODE_NAME });
    const realAfter = await kp.next("10.180.0.39");
    const after = await readCluster(api);
    const partial = renderNFTables(
      options,
      { ...buildMaps("IPv4", after.services, after.slices), changedServices: new Set(["ns9/svc9"]), now: 1 },
      result.state,
    );
    assert.equal(partial.fullSync, false);
    assert.doesNotMatch(partial.transaction.toString(), /ns1\/svc1/);
    H.inNetns(ns, ["nft", "-f", "-"], partial.transaction.script());
    const oursAfter = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
    report(
      "nft list table ip kube-proxy after a partial sync",
      canonicalNFTList(realAfter),
      canonicalNFTList(oursAfter),
    );
  });
  // detect-local by interface: the same cluster with the pod-traffic match on iifname / -i.
  const interfaceModes = [
    {
      label: "br",
      args: ["--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0"],
      detector: { mode: "BridgeInterface", interfaceName: "cbr0" },
      nft: /iifname != "cbr0" .*iifname "cbr0" goto/s,
      ipt: /! -i cbr0 .*-i cbr0 /s,
    },
    {
      label: "pf",
      args: ["--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix=veth"],
      detector: { mode: "InterfaceNamePrefix", prefix: "veth" },
      nft: /iifname != "veth\*" .*iifname "veth\*" goto/s,
      ipt: /! -i veth\+ .*-i veth\+ /s,
    },
  ] as const;
  for (const [i, m] of interfaceModes.entries()) {
    test(`nftables mode, ${m.args.join(" ")}`, async () => {
      const kp = await runRealKubeProxy("nftables", 203 + i, m.args, `n${m.label}`);
      const { services, slices } = await readCluster(api);
      const options = nftOptions("IPv4", { localDetector: m.detector, serviceCIDRs: [SERVICE_CIDR] });
      const result = renderNFTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });
      const ns = loadOursNFT(`n${m.label}`, result.transaction.script());
      const ours = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
      // both detector matches must be there, or the comparison proves nothing about them
      assert.match(kp.dump, m.nft);
      report(`nft list (${m.detector.mode})`, canonicalNFTList(kp.dump), canonicalNFTList(ours));
    });

    test(`iptables mode, ${m.args.join(" ")}`, async () => {
      const kp = await runRealKubeProxy("iptables", 205 + i, m.args, `i${m.label}`);
      const { services, slices } = await readCluster(api);
      const nfacct = kp.dump.includes("--nfacct-name");
      const options = iptOptions("IPv4", {
        localDetector: m.detector,
        nfacctCounters: { localhostNodePortsAccepted: nfacct, ctStateInvalidDropped: nfacct },
      });
      const result = renderIPTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });
      const ns = loadOursIPTables(`i${m.label}`, result.restore, nfacct);
      const ours = H.inNetns(ns, ["iptables-save"]);
      assert.match(kp.dump, m.ipt);
      report(
        `iptables-save (${m.detector.mode})`,
        sortDispatchChains(sortIPTables(kp.dump)),
        sortDispatchChains(sortIPTables(ours)),
      );
    });
  }
});

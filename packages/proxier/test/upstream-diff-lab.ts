// What both upstream diffs (upstream-diff.test.ts: IPv4; upstream-diff-dual.test.ts: IPv6 and
// dual-stack) share: a cluster written into a real API server, the real kube-proxy run in a
// namespace of its own, our rules loaded into another, and the canonical comparison of dumps.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Server } from "node:net";
import { join } from "node:path";
import type { IPFamily, ServiceCIDR } from "@switchyard/basics";
import type { TestControlPlane } from "@switchyard/testbed";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { NetlinkNftApplier } from "../src/apply/netlink-applier.js";
import { ensureCanaryChains, ensureJumpChains } from "../src/iptables/skeleton.js";
import { CT_STATE_INVALID_NFACCT, LOCALHOST_NODEPORTS_NFACCT } from "../src/metrics/nfacct-metrics.js";
import type { Transaction } from "../src/nftables/transaction.js";
import { allServiceCIDRs, serviceCIDRsOfFamily } from "../src/proxier/service-cidrs.js";
import { NODE_IP, NODE_NAME } from "../src/testing/fixtures.js";
import { lineDiff } from "./nft-helpers.js";
import { canonicalNFTList } from "./nft-list.js";
import * as H from "./upstream-harness.js";

export type ProxyMode = "iptables" | "nftables";

/** The Node with its InternalIPs (one per family it has), the Services with their status, then the slices. */
export async function createCluster(
  api: H.ApiClient,
  c: { nodeIPs: readonly string[]; services: readonly Service[]; slices: readonly EndpointSlice[] },
): Promise<void> {
  await api.call("POST", "/api/v1/nodes", {
    metadata: { name: NODE_NAME, labels: { "topology.kubernetes.io/zone": "zone-a" } },
  });
  const node = (await api.call("GET", `/api/v1/nodes/${NODE_NAME}`)) as { status?: object };
  await api.call("PUT", `/api/v1/nodes/${NODE_NAME}/status`, {
    ...node,
    status: { ...node.status, addresses: c.nodeIPs.map((address) => ({ type: "InternalIP", address })) },
  });
  for (const ns of new Set(c.services.map((s) => s.metadata?.namespace ?? ""))) {
    await api.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  }
  for (const svc of c.services) {
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
  for (const slice of c.slices) {
    await api.call(
      "POST",
      `/apis/discovery.k8s.io/v1/namespaces/${slice.metadata?.namespace}/endpointslices`,
      slice,
    );
  }
}

/** ServiceCIDRs as the app gets them: every object the API server holds, this family's share. */
export async function serviceCIDRsFromAPI(api: H.ApiClient, family: IPFamily): Promise<string[]> {
  const objects = (
    (await api.call("GET", "/apis/networking.k8s.io/v1/servicecidrs")) as { items: ServiceCIDR[] }
  ).items;
  return serviceCIDRsOfFamily(allServiceCIDRs(objects), family).cidrs;
}

/** Everything the API server holds, as kube-proxy's informers see it. */
export async function readCluster(
  api: H.ApiClient,
): Promise<{ services: Service[]; slices: EndpointSlice[] }> {
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
export function sortDispatchChains(lines: string[]): string[] {
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
export async function setEndpoints(
  api: H.ApiClient,
  ns: string,
  slice: string,
  ips: Record<string, string>,
): Promise<void> {
  const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${slice}`;
  const current = (await api.call("GET", path)) as EndpointSlice;
  const endpoints = Object.entries(ips).map(([ip, nodeName]) => ({ addresses: [ip], nodeName }));
  await api.call("PUT", path, { ...current, endpoints });
}

export function report(name: string, expected: string[], actual: string[]): void {
  if (expected.join("\n") === actual.join("\n")) return;
  const diff = lineDiff(expected, actual)
    .split("\n")
    .filter((l) => !l.startsWith("  "))
    .join("\n");
  assert.fail(`${name}: ours (+) differs from kube-proxy v1.37.2 (-):\n${diff}`);
}

/** The command that dumps a mode's rules of one family, as an operator would list them. */
export function dumpCommand(mode: ProxyMode, family: IPFamily): string[] {
  if (mode === "iptables") return [family === "IPv4" ? "iptables-save" : "ip6tables-save"];
  return ["nft", "list", "table", family === "IPv4" ? "ip" : "ip6", "kube-proxy"];
}

/** The first thing each dump shows of the golden cluster's last Service, in each mode. */
const markers: Record<ProxyMode, string> = {
  iptables: "ns9/svc9:dns cluster IP",
  nftables: "ns9/svc9/udp/dns",
};

export interface RealRunOptions {
  /** Names the namespaces of one run. */
  label?: string;
  /** After the common flags. */
  extraArgs?: readonly string[];
  /** --cluster-cidr: one CIDR, or one per family. */
  clusterCidr: string;
  /** The node's IPv6 address on its link too (a dual-stack node); the Node object says which it has. */
  nodeIPv6?: string;
  /** The families whose dumps the run waits for (every one must show the golden cluster). */
  families?: readonly IPFamily[];
}

export interface RealRun {
  /** The namespace kube-proxy runs in (its node's network: rules, conntrack table). */
  netns: string;
  /** Per family, the settled dump. */
  dumps: Record<IPFamily, string>;
  /** The family's dump once it contains `text` and has settled again. */
  next(text: string, family?: IPFamily): Promise<string>;
}

/**
 * Network namespaces and processes of one diff suite against one control plane: the real
 * kube-proxy's runs and our loaded rules, all removed by close().
 */
export class DiffLab {
  private readonly cleanups: (() => unknown)[] = [];
  private readonly tag = `${process.pid % 100000}`;

  constructor(private readonly cp: TestControlPlane) {}

  get api(): H.ApiClient {
    return H.apiClient(this.cp.server, join(this.cp.stateDir, "pki"));
  }

  async close(): Promise<void> {
    for (const fn of this.cleanups.reverse()) await fn();
  }

  private freshNetns(name: string): string {
    H.deleteNetns(name);
    this.cleanups.push(() => H.deleteNetns(name));
    H.createNetns(name);
    return name;
  }

  async runRealKubeProxy(mode: ProxyMode, subnet: number, o: RealRunOptions): Promise<RealRun> {
    const label = o.label ?? mode.slice(0, 3);
    const ns = this.freshNetns(`sy-kp-${label}-${this.tag}`);
    const hostIP = H.linkToHost(ns, `syk${label}${this.tag}`.slice(0, 15), subnet, NODE_IP);
    if (o.nodeIPv6) H.inNetns(ns, ["ip", "addr", "add", `${o.nodeIPv6}/64`, "dev", "eth0", "nodad"]);
    const apiURL = new URL(this.cp.server);
    const forwarder: Server = await H.startForwarder(hostIP, {
      host: apiURL.hostname,
      port: Number(apiURL.port),
    });
    this.cleanups.push(() => new Promise((r) => forwarder.close(r)));
    const port = (forwarder.address() as { port: number }).port;
    const kubeconfig = H.kubeconfigVia(this.cp.kubeconfigPath, `https://${hostIP}:${port}`);
    const kp = H.startKubeProxy(ns, [
      `--kubeconfig=${kubeconfig}`,
      `--proxy-mode=${mode}`,
      `--hostname-override=${NODE_NAME}`,
      `--cluster-cidr=${o.clusterCidr}`,
      // the namespace has its own loopback, so the default ports cannot clash (port 0 is refused)
      "--metrics-bind-address=127.0.0.1:10249",
      "--healthz-bind-address=127.0.0.1:10256",
      // conntrack sysctls are global, not per namespace: leave them alone
      "--conntrack-max-per-core=0",
      "--v=2",
      ...(o.extraArgs ?? []),
    ]);
    this.cleanups.push(() => kp.stop());
    const settled = async (text: string, family: IPFamily = "IPv4"): Promise<string> => {
      try {
        return await H.waitForStableDump(
          () => H.inNetns(ns, dumpCommand(mode, family)),
          (t) => {
            if (kp.process.exitCode !== null)
              throw new Error(`kube-proxy exited with ${kp.process.exitCode}`);
            return t.includes(text);
          },
          90_000,
        );
      } catch (e) {
        throw new Error(
          `${(e as Error).message}\nkube-proxy log:\n${readFileSync(kp.logPath, "utf8").slice(-4000)}`,
        );
      }
    };
    const dumps = { IPv4: "", IPv6: "" };
    for (const family of o.families ?? ["IPv4"]) dumps[family] = await settled(markers[mode], family);
    return { netns: ns, dumps, next: settled };
  }

  /** A fresh namespace holding our iptables rules of one family, set up as the backend would; its name. */
  loadOursIPTables(label: string, restore: string, nfacct: boolean, family: IPFamily = "IPv4"): string {
    const ns = this.freshNetns(`sy-ours-${label}-${this.tag}`);
    const bin = family === "IPv4" ? "iptables" : "ip6tables";
    const ipt = {
      ensureChain: (table: string, chain: string) => {
        try {
          H.inNetns(ns, [bin, "-w", "-t", table, "-N", chain]);
        } catch {
          // exists
        }
      },
      ensureRule: (_pos: string, table: string, chain: string, args: readonly string[]) => {
        try {
          H.inNetns(ns, [bin, "-w", "-t", table, "-C", chain, ...args]);
        } catch {
          H.inNetns(ns, [bin, "-w", "-t", table, "-I", chain, ...args]);
        }
      },
    };
    // kube-proxy creates its nfacct counters over netlink; rules naming a missing one fail
    if (nfacct)
      for (const name of [LOCALHOST_NODEPORTS_NFACCT, CT_STATE_INVALID_NFACCT])
        H.inNetns(ns, ["nfacct", "add", name]);
    ensureCanaryChains(ipt);
    ensureJumpChains(ipt);
    H.inNetns(ns, [`${bin}-restore`, "-w", "--noflush", "--counters"], restore);
    return ns;
  }

  /**
   * A fresh namespace holding our rules, written as the proxy writes them: by the netlink writer
   * (never falling back to `nft`); its name, and the writer for the partial syncs that follow.
   */
  async loadOursNFT(label: string, tx: Transaction): Promise<{ ns: string; writer: NetlinkNftApplier }> {
    const ns = this.freshNetns(`sy-ours-${label}-${this.tag}`);
    const writer = new NetlinkNftApplier({ netns: ns, writer: "netlink" });
    this.cleanups.push(() => writer.close());
    await writer.run(tx);
    assert.deepEqual(writer.stats, { netlink: 1, fallback: 0, staged: 0 });
    await this.#sameWhenStaged(label, tx, ns);
    return { ns, writer };
  }

  /**
   * The same transaction through a writer that stages its new chains (a big full sync's path,
   * forced here two chains at a time) must leave the same table, so upstream's dump covers it too.
   */
  async #sameWhenStaged(label: string, tx: Transaction, whole: string): Promise<void> {
    const ns = this.freshNetns(`sy-stg-${label}-${this.tag}`);
    const writer = new NetlinkNftApplier({
      netns: ns,
      writer: "netlink",
      staging: { minChains: 1, chainsPerStage: 2 },
    });
    this.cleanups.push(() => writer.close());
    await writer.run(tx);
    assert.deepEqual(writer.stats, { netlink: 1, fallback: 0, staged: 1 });
    const list = (n: string) =>
      canonicalNFTList(H.inNetns(n, ["nft", "list", "table", tx.family, tx.table])).join("\n");
    assert.equal(list(ns), list(whole), "staged and whole writes left different tables");
  }
}

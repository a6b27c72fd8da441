import type { Exec } from "../../exec.js";
import type { ProxyMode } from "../../stack/manifests.js";
import { runAt } from "../kit/pod-run.js";
import type { LabNode } from "../kit/scenario-lab.js";

/** What a node's ruleset looks like at one size: lines, bytes, per-endpoint chains, the load-balancing rule. */
export interface RulesetShape {
  /** iptables: our `-A` lines (nat + filter); nftables: lines of the kube-proxy table. */
  lines: number;
  bytes: number;
  /** iptables: KUBE-SEP chains; nftables: endpoint chains. */
  endpointChains: number;
  /** Rules per endpoint (lines / endpoints in the cluster). */
  perEndpoint: number;
  /** How one Service with `perService` endpoints picks one: the rule(s) as listed. */
  picking: string[];
  /** iptables: 1-based positions of the first and last Service's ClusterIP in nat KUBE-SERVICES, and its length. */
  positions?: { first: number; last: number; of: number };
}

/** The dump of the mode's rules: iptables-save of the backend with our rules, or the kube-proxy table. */
export async function dumpRules(exec: Exec, node: LabNode, mode: ProxyMode): Promise<string> {
  if (mode === "nftables") return runAt(exec, node.run, ["nft", "list", "table", "ip", "kube-proxy"]);
  const nft = await runAt(exec, node.run, ["iptables-nft-save"]);
  return nft.includes("KUBE-SERVICES") ? nft : runAt(exec, node.run, ["iptables-legacy-save"]);
}

export function rulesetShape(
  dump: string,
  mode: ProxyMode,
  endpoints: number,
  middle: { ns: string; name: string; affinity?: string },
  clusterIps: { first: string; last: string },
): RulesetShape {
  const all = dump.split("\n");
  if (mode === "iptables") {
    const ours = all.filter(
      (l) => l.startsWith("-A ") && l.includes("KUBE-") && !l.includes("KUBE-FIREWALL"),
    );
    const services = ours.filter((l) => l.startsWith("-A KUBE-SERVICES "));
    const pos = (ip: string) => services.findIndex((l) => l.includes(` -d ${ip}/32 `)) + 1;
    const svcChainOf = (name: string) =>
      ours
        .find((l) => l.startsWith("-A KUBE-SERVICES ") && l.includes(`${middle.ns}/${name}:`))
        ?.split(" -j ")[1]
        ?.trim();
    const picking = (name: string) => {
      const chain = svcChainOf(name);
      return chain ? ours.filter((l) => l.startsWith(`-A ${chain} `) && l.includes("KUBE-SEP-")) : [];
    };
    return {
      lines: ours.length,
      bytes: Buffer.byteLength(ours.join("\n")),
      endpointChains: all.filter((l) => l.startsWith(":KUBE-SEP-")).length,
      perEndpoint: ours.length / Math.max(1, endpoints),
      picking: picking(middle.name),
      positions: { first: pos(clusterIps.first), last: pos(clusterIps.last), of: services.length },
    };
  }
  const inside = all.filter((l) => l.trim() !== "");
  const chainBody = (name: string) => {
    const start = inside.findIndex(
      (l) => /^\s*chain /.test(l) && l.includes(`${middle.ns}/${name}/`) && l.includes("service-"),
    );
    if (start < 0) return [];
    const end = inside.findIndex((l, i) => i > start && /^\s*}/.test(l));
    return inside.slice(start + 1, end).map((l) => l.trim());
  };
  const pickLine = (name: string) =>
    chainBody(name).filter((l) => l.includes("numgen") || l.includes("dnat to"));
  return {
    lines: inside.length,
    bytes: Buffer.byteLength(dump),
    endpointChains: inside.filter((l) => /^\s*chain "?endpoint-/.test(l)).length,
    perEndpoint: inside.length / Math.max(1, endpoints),
    picking: [...pickLine(middle.name), ...(middle.affinity ? pickLine(middle.affinity) : [])],
  };
}

/** A long rule shortened for the report: its start and its end. */
export function shorten(rule: string, max = 150): string {
  return rule.length <= max ? rule : `${rule.slice(0, max - 40)} … ${rule.slice(-35)}`;
}

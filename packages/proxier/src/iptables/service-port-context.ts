// What the writers of one Service port's rules share. Its own file so that service-rules.ts,
// service-chains.ts and endpoint-rules.ts depend on it rather than on each other.
import type { ServicePortInfo } from "../model/service-port.js";
import type { TrafficPolicyPlan } from "../model/traffic-policy.js";
import type { LineSink } from "./line-buffer.js";
import type { ServicePortChains } from "./names.js";
import type { IPTablesOptions } from "./options.js";

export interface ServicePortContext {
  readonly options: IPTablesOptions;
  readonly filterRules: LineSink;
  /** Where this port's own chains go; a throw-away buffer when they are unchanged. */
  readonly natChains: LineSink;
  readonly natRules: LineSink;
  /** Top-level nat rules (KUBE-SERVICES, KUBE-NODEPORTS), written on every sync. */
  readonly topNatRules: LineSink;
  /** Collects this port's chains, written or skipped: they must exist after this sync. */
  readonly activeNATChains: { add(chain: string): unknown };
  /** Above the endpoint threshold, per-endpoint comments are left out. */
  readonly largeClusterMode: boolean;
}

export interface ServicePortOutcome {
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

/** One Service port being written: the sinks, its names and the traffic-policy decision. */
export interface PortPlan {
  readonly ctx: ServicePortContext;
  readonly sp: ServicePortInfo;
  /** "ns/svc:port", the text of most comments. */
  readonly name: string;
  /** Lower-case protocol, as iptables matches take it. */
  readonly proto: string;
  readonly chains: ServicePortChains;
  readonly traffic: TrafficPolicyPlan;
}

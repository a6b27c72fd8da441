// kube-proxy's own health (/healthz, /livez on port 10256). A proxier reports every change
// it queues and every successful sync; it is unhealthy once a queued change has waited
// longer than the health timeout (kube-proxy uses 2 × syncPeriod). /healthz additionally
// fails while the node is being deleted, so load balancers drain it first.

import type { IPFamily } from "@switchyard/basics";
import type { Clock } from "@switchyard/kube";
import { GO_ZERO_TIME, goTimeString, type HealthResponse, JSON_HEADERS } from "./response.js";

/** The Cluster Autoscaler taints a node with this before deleting it. */
export const TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

export interface ProxyHealthOptions {
  readonly clock: Pick<Clock, "now">;
  readonly healthTimeoutMs: number;
  /** Counts answers (kubeproxy_proxy_healthz_total / proxy_livez_total by code). */
  readonly onResponse?: (path: "/healthz" | "/livez", status: number) => void;
}

export class ProxyHealth {
  readonly #o: ProxyHealthOptions;
  readonly #lastUpdated = new Map<IPFamily, number>();
  readonly #oldestPendingQueued = new Map<IPFamily, number>();
  // Healthy while starting up, until a node event says otherwise.
  #nodeEligible = true;

  constructor(options: ProxyHealthOptions) {
    this.#o = options;
  }

  /** A change arrived that the proxier of `family` has not yet written; only the oldest counts. */
  queuedUpdate(family: IPFamily): void {
    if (!this.#oldestPendingQueued.has(family)) this.#oldestPendingQueued.set(family, this.#o.clock.now());
  }

  /** The proxier of `family` synced successfully: everything queued so far is written. */
  updated(family: IPFamily): void {
    this.#oldestPendingQueued.delete(family);
    this.#lastUpdated.set(family, this.#o.clock.now());
  }

  /** Follows the Node object: being deleted or tainted for deletion makes /healthz fail. */
  syncNode(node: { readonly deleting: boolean; readonly taintKeys: readonly string[] }): void {
    this.#nodeEligible = !node.deleting && !node.taintKeys.includes(TO_BE_DELETED_TAINT);
  }

  get nodeEligible(): boolean {
    return this.#nodeEligible;
  }

  /** Whether every proxier is keeping up; the lastUpdated to report when one is not. */
  #check(): { healthy: boolean; lastUpdated: number | undefined } {
    const now = this.#o.clock.now();
    let latest: number | undefined;
    for (const t of this.#lastUpdated.values()) if (latest === undefined || t > latest) latest = t;
    for (const [family, queued] of this.#oldestPendingQueued) {
      if (now - queued >= this.#o.healthTimeoutMs) {
        return { healthy: false, lastUpdated: this.#lastUpdated.get(family) };
      }
    }
    return { healthy: true, lastUpdated: latest };
  }

  /** The proxier-only health (ignores the node), as the service health checks use it. */
  isHealthy(): boolean {
    return this.#check().healthy;
  }

  healthz(): HealthResponse {
    const { healthy, lastUpdated } = this.#check();
    const ok = healthy && this.#nodeEligible;
    return this.#respond("/healthz", ok, lastUpdated, `, "nodeEligible": ${this.#nodeEligible}`);
  }

  livez(): HealthResponse {
    const { healthy, lastUpdated } = this.#check();
    return this.#respond("/livez", healthy, lastUpdated, "");
  }

  #respond(path: "/healthz" | "/livez", ok: boolean, lastUpdated: number | undefined, extra: string) {
    const now = this.#o.clock.now();
    const status = ok ? 200 : 503;
    this.#o.onResponse?.(path, status);
    // Older kube-proxies reported the last loop run here, so a healthy answer says "now".
    const shown = ok
      ? goTimeString(now)
      : lastUpdated === undefined
        ? GO_ZERO_TIME
        : goTimeString(lastUpdated);
    const body = `{"lastUpdated": ${JSON.stringify(shown)},"currentTime": ${JSON.stringify(goTimeString(now))}${extra}}`;
    return { status, headers: JSON_HEADERS, body };
  }

  /** Routes a request path; anything else is a 404. */
  handle(path: string): HealthResponse {
    if (path === "/healthz") return this.healthz();
    if (path === "/livez") return this.livez();
    return { status: 404, headers: { "Content-Type": "text/plain" }, body: "404 page not found\n" };
  }
}

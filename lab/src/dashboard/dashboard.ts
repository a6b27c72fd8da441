import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { HttpRestClient, type RestClient } from "@switchyard/kube";
import { type Exec, realExec } from "../exec.js";
import { repoRoot } from "../self.js";
import { DashboardCore } from "./dashboard-core.js";
import { defaultDashboardPort } from "./defaults.js";
import { type DashboardLab, openDashboardLab } from "./lab-access.js";
import { type LabWatch, watchLab } from "./lab-watch.js";
import { LiveView } from "./live-view.js";
import { scrapeDnsPod, scrapeProxy } from "./scrape.js";
import { serveDashboard } from "./server.js";

export { defaultDashboardPort } from "./defaults.js";

export interface DashboardOptions {
  stateDir: string;
  /** 0 for any free port. */
  port?: number;
  host?: string;
  /** How often the proxies' and DNS pods' metrics are read. */
  scrapeIntervalMs?: number;
  exec?: Exec;
  /** The lab; opened from stateDir when absent. */
  lab?: DashboardLab;
  /** The lab's API; an HTTP client of lab.access when absent. */
  client?: RestClient;
  /** How long the first view waits for the watches to list and the first scrape round (default 10 s). */
  firstViewTimeoutMs?: number;
}

export interface RunningDashboard {
  url: string;
  stop(): Promise<void>;
}

/** One round of reading every proxy's and DNS pod's metrics from inside their nodes, all at once. */
async function scrapeRound(lab: DashboardLab, watch: LabWatch, core: DashboardCore, exec: Exec) {
  const proxies = watch.nodeNames().map(async (name) => {
    const shell = lab.nodeShell(name);
    if (shell) core.proxyScraped(await scrapeProxy(exec, name, shell, core.lastScrape(name), Date.now));
  });
  const dns = watch.dnsPods().map(async (pod) => {
    const shell = lab.nodeShell(pod.spec?.nodeName ?? "");
    if (shell) core.dnsScraped(await scrapeDnsPod(exec, pod, shell, Date.now));
  });
  await Promise.all([...proxies, ...dns]);
}

/**
 * Follows the lab in stateDir and serves its page: the watched objects (lab-watch.ts), every proxy's and DNS
 * pod's metrics read each round, the progress file of a running `migrate`; DashboardCore turns them into the
 * view, LiveView hands it to the page on every change. The server starts once the watches have listed and one
 * scrape round is in (or firstViewTimeoutMs passed), so a page opened at once shows what is already known:
 * each node's proxy mode and the syncs it made, not "-" until the next round.
 */
export async function startDashboard(o: DashboardOptions): Promise<RunningDashboard> {
  const lab = o.lab ?? (await openDashboardLab(o.stateDir));
  const exec = o.exec ?? realExec;
  const client = o.client ?? new HttpRestClient(lab.access);
  const core = new DashboardCore(lab.lab);
  let watch: LabWatch | undefined;
  const live = new LiveView(() => core.view(watch?.objects() ?? emptyObjects, Date.now()));
  watch = watchLab(client, o.stateDir, {
    endpoints: (service, counts) => core.recordEndpoints(service, counts, Date.now()),
    changed: () => live.changed(),
  });
  const running = watch;
  const abort = new AbortController();
  // The first round waits for the node list: before it, there is no node to read a proxy from.
  const firstView = AbortSignal.any([abort.signal, AbortSignal.timeout(o.firstViewTimeoutMs ?? 10_000)]);
  let firstRound: () => void = () => {};
  const firstRoundDone = new Promise<void>((resolve) => {
    firstRound = resolve;
    firstView.addEventListener("abort", () => resolve(), { once: true });
  });
  const scraping = (async () => {
    await running.synced(firstView);
    while (!abort.signal.aborted) {
      await scrapeRound(lab, running, core, exec).catch(() => {});
      firstRound();
      live.changed();
      await delay(o.scrapeIntervalMs ?? 2000, undefined, { signal: abort.signal }).catch(() => {});
    }
  })();
  const stopWork = async () => {
    abort.abort();
    live.stop();
    await running.stop();
    await scraping;
    // A client given by the caller stays the caller's to close.
    if (!o.client && client instanceof HttpRestClient) client.close();
  };
  await firstRoundDone;
  live.publish();
  const server = await serveDashboard({
    host: o.host ?? "127.0.0.1",
    port: o.port ?? defaultDashboardPort,
    title: `switchyard-lab dashboard: ${lab.lab.name} (${lab.lab.runtime})`,
    pageDir: join(repoRoot, "lab", "dist", "dashboard", "page"),
    current: () => live.current(),
    subscribe: (listener) => live.subscribe(listener),
  }).catch(async (err: Error) => {
    await stopWork();
    throw err;
  });
  return {
    url: server.url,
    stop: async () => {
      await server.close();
      await stopWork();
    },
  };
}

const emptyObjects = { nodes: [], services: [], slices: [], dnsPods: [], corefile: "", notSynced: [] };

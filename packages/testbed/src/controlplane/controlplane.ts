import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { realClock, sleep } from "@switchyard/kube";
import { ensurePrivateDir } from "../private-files.js";
import { Progress, type ProgressSink } from "../progress.js";
import {
  cacheBinDir,
  type Env,
  missingBinariesMessage,
  resolveBinary,
  type UpstreamBinary,
} from "../upstream/binaries.js";
import { writeFileAtomic } from "../write-file.js";
import { apiserverUrl, etcdClientUrl, type StatePaths, statePaths } from "./args.js";
import { adminTls, type Component, enabledComponents, etcdHealthTls, hostPort } from "./components.js";
import { type ClientTls, probe } from "./health.js";
import { writeKubeconfig } from "./kubeconfig.js";
import { type ControlPlaneInput, type ControlPlaneOptions, firstServiceIp, withDefaults } from "./options.js";
import { ensurePki, type Pki, pkiPaths } from "./pki.js";
import { assertPortsFree } from "./ports.js";
import {
  isOurs,
  lastErrorLine,
  lastLines,
  type ProcessRecord,
  startDetached,
  stopProcess,
} from "./processes.js";

export type { ComponentName } from "./components.js";

/** What `up` leaves behind for `down` and `status`: enough to find and verify every process it started. */
export interface ControlPlaneState {
  options: ControlPlaneOptions;
  server: string;
  kubeconfig: string;
  processes: ProcessRecord[];
  startedAt: string;
  startSeconds: number;
}

export interface UpOptions extends ControlPlaneInput {
  env?: Env;
  out?: ProgressSink;
}

export function readState(stateDir: string): ControlPlaneState | undefined {
  const file = statePaths(stateDir).stateFile;
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as ControlPlaneState;
}

/** Atomically: a full disk leaves the previous state, so `down` still finds what was started. */
export function writeState(paths: StatePaths, state: ControlPlaneState): void {
  writeFileAtomic(paths.stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

function binaryPath(name: UpstreamBinary, env: Env): string {
  const found = resolveBinary(name, env);
  if (!found.path) throw new Error(missingBinariesMessage([name], cacheBinDir(env)));
  return found.path;
}

/** etcd holds an exclusive flock on its database while it runs; someone else's etcd on our folder holds it. */
function assertEtcdDataUnlocked(paths: StatePaths): void {
  const db = join(paths.etcdData, "member", "snap", "db");
  if (!existsSync(db)) return;
  try {
    execFileSync("flock", ["--nonblock", "--exclusive", db, "true"], { stdio: "ignore" });
  } catch {
    throw new Error(
      `etcd data folder ${paths.etcdData} is locked by another etcd process; stop it or use another --state-dir`,
    );
  }
}

// etcd preallocates its first write-ahead log segment (64 MB) when its data folder is new, and panics when the
// disk cannot hold it; its bolt database and the logs need a little more.
const ETCD_FIRST_START_BYTES = 64_000_000 + 2 ** 20;

/** A new etcd data folder on a filesystem too small for its first WAL segment: said in one line, before it starts. */
function assertEtcdSpace(paths: StatePaths): void {
  if (existsSync(join(paths.etcdData, "member", "wal"))) return;
  const fs = statfsSync(paths.dir);
  const free = fs.bavail * fs.bsize;
  if (free >= ETCD_FIRST_START_BYTES) return;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  throw new Error(
    `not enough space for etcd in ${paths.dir}: it preallocates 64 MB for its write-ahead log, ${mb(free)} free`,
  );
}

/**
 * Waits until `check` passes, failing early with the component's log when its process exits, and with the
 * last lines of the log when the timeout passes.
 */
async function waitFor(
  what: string,
  record: ProcessRecord,
  check: () => Promise<boolean>,
  timeoutMs: number,
  progress: Progress,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (!isOurs(record)) {
      const why = lastErrorLine(record.log);
      throw new Error(
        `${record.name} exited during start-up${why ? `: ${why}` : ""}; last lines of ${record.log}:\n${lastLines(record.log)}`,
      );
    }
    progress.update(`waiting for ${what}`);
    await sleep(realClock, 250);
  }
  throw new Error(
    `${what} not ready within ${timeoutMs / 1000}s; last lines of ${record.log}:\n${lastLines(record.log)}`,
  );
}

/** One kubeconfig per apiserver client: the admin's (the state's), the controller-manager's, the scheduler's. */
const kubeconfigs: ReadonlyArray<{
  path: (paths: StatePaths) => string;
  client: keyof Pki["clients"];
  user: string;
}> = [
  { path: (paths) => paths.adminKubeconfig, client: "admin", user: "kubernetes-admin" },
  {
    path: (paths) => paths.controllerManagerKubeconfig,
    client: "controller-manager",
    user: "system:kube-controller-manager",
  },
  { path: (paths) => paths.schedulerKubeconfig, client: "scheduler", user: "system:kube-scheduler" },
];

const isIpAddress = (san: string) => /^[\d.:a-f]+$/i.test(san);

/**
 * Every name and address a client may reach the apiserver by, so its serving certificate matches; and where etcd
 * listens, for etcd's.
 */
function servingSans(o: ControlPlaneOptions): { ips: string[]; dnsNames: string[]; etcdIps: string[] } {
  return {
    etcdIps: [o.bindAddress],
    ips: [
      "127.0.0.1",
      o.bindAddress,
      o.apiserverBindAddress,
      o.advertiseAddress,
      firstServiceIp(o.serviceCidr),
      ...o.extraSans.filter(isIpAddress),
    ],
    dnsNames: [
      "localhost",
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      "kubernetes.default.svc.cluster.local",
    ].concat(o.extraSans.filter((s) => !isIpAddress(s))),
  };
}

/** Refuses to start over a running control plane, without a binary, or on a port someone else holds. */
async function assertCanStart(o: ControlPlaneOptions, wanted: readonly Component[], env: Env): Promise<void> {
  const running = readState(o.stateDir)?.processes.find(isOurs);
  if (running) {
    throw new Error(
      `a control plane is already running from ${o.stateDir} (${running.name} pid ${running.pid}); run \`switchyard-lab controlplane down\` first`,
    );
  }
  const missing = wanted.map((c) => c.name).filter((name) => !resolveBinary(name, env).path);
  if (missing.length > 0) throw new Error(missingBinariesMessage(missing, cacheBinDir(env)));

  const ports = wanted.flatMap((c) => c.ports(o));
  // The apiserver may listen elsewhere (a lab bridge) than the rest.
  await assertPortsFree(
    o.bindAddress,
    ports.filter((p) => p.what !== "kube-apiserver"),
  );
  await assertPortsFree(
    o.apiserverBindAddress,
    ports.filter((p) => p.what === "kube-apiserver"),
  );
}

/**
 * Starts the components group by group, each group ready before the next; the state is written after each start
 * so `down` finds whatever did start, even after a failure (then everything started is stopped again).
 */
async function startComponents(
  o: ControlPlaneOptions,
  wanted: readonly Component[],
  state: ControlPlaneState,
  pki: Pki,
  env: Env,
  progress: Progress,
): Promise<void> {
  const paths = statePaths(o.stateDir);
  const groups = [...new Set(wanted.map((c) => c.group))].sort((a, b) => a - b);
  try {
    for (const group of groups) {
      const started = wanted
        .filter((c) => c.group === group)
        .map((c) => {
          const log = join(paths.logs, `${c.name}.log`);
          const record = startDetached(
            c.name,
            binaryPath(c.name, env),
            c.args(o, paths, pki),
            log,
            o.detached,
          );
          state.processes.push(record);
          writeState(paths, state);
          return { component: c, record };
        });
      for (const { component, record } of started)
        await waitFor(
          component.waitingFor,
          record,
          () => component.ready(o, state.server, pki),
          o.readyTimeoutMs,
          progress,
        );
    }
  } catch (err) {
    await stopAll(state.processes);
    throw err;
  }
}

/** Starts etcd, kube-apiserver and (unless skipped) the controller-manager and scheduler, and waits for /readyz. */
export async function up(partial: UpOptions = {}): Promise<ControlPlaneState> {
  const env = partial.env ?? process.env;
  const o = withDefaults(partial);
  const paths = statePaths(o.stateDir);
  const progress = new Progress("controlplane", partial.out ?? process.stderr);
  const started = Date.now();
  const wanted = enabledComponents(o);
  await assertCanStart(o, wanted, env);

  ensurePrivateDir(paths.dir);
  mkdirSync(paths.logs, { recursive: true });
  assertEtcdDataUnlocked(paths);
  progress.update("generating certificates", true);
  const pki = await ensurePki(paths.pki, servingSans(o));
  const server = apiserverUrl(o);
  for (const k of kubeconfigs)
    writeKubeconfig(k.path(paths), { server, caFile: pki.caCert, ...asClient(pki, k.client), user: k.user });

  assertEtcdSpace(paths);

  const state: ControlPlaneState = {
    options: o,
    server,
    kubeconfig: paths.adminKubeconfig,
    processes: [],
    startedAt: new Date().toISOString(),
    startSeconds: 0,
  };
  await startComponents(o, wanted, state, pki, env, progress);
  state.startSeconds = (Date.now() - started) / 1000;
  writeState(paths, state);
  progress.done(`ready at ${server}`);
  return state;
}

function asClient(pki: Pki, who: keyof Pki["clients"]) {
  return { certFile: pki.clients[who].cert, keyFile: pki.clients[who].key };
}

async function stopAll(records: readonly ProcessRecord[]): Promise<Array<{ name: string; result: string }>> {
  const results = [];
  // Reverse start order: clients first, etcd last, so nothing logs storms of connection errors on the way down.
  for (const record of [...records].reverse())
    results.push({ name: record.name, result: await stopProcess(record) });
  return results;
}

export interface DownResult {
  stopped: Array<{ name: string; result: string }>;
  removed: boolean;
}

/** Stops everything `up` started from this state folder, checks each pid is gone, and removes the folder unless kept. */
export async function down(stateDir: string, keep = false): Promise<DownResult> {
  const state = readState(stateDir);
  const stopped = state ? await stopAll(state.processes) : [];
  const survivors = (state?.processes ?? []).filter(isOurs);
  if (survivors.length > 0) {
    throw new Error(`still running after down: ${survivors.map((p) => `${p.name} pid ${p.pid}`).join(", ")}`);
  }
  if (!keep && existsSync(stateDir)) rmSync(stateDir, { recursive: true, force: true });
  return { stopped, removed: !keep };
}

export interface ComponentStatus {
  name: string;
  pid: number;
  running: boolean;
  health: string;
}

/** Each recorded process: alive (and still ours) or not, and what its health endpoint says. */
export async function status(
  stateDir: string,
): Promise<{ state: ControlPlaneState | undefined; components: ComponentStatus[] }> {
  const state = readState(stateDir);
  if (!state) return { state, components: [] };
  const o = state.options;
  const pki = pkiPaths(statePaths(stateDir).pki);
  // The controller-manager and scheduler serve self-signed certificates; their /healthz is public anyway.
  const checks: Record<string, { url: string; tls: ClientTls }> = {
    etcd: { url: `${etcdClientUrl(o)}/health`, tls: etcdHealthTls(pki) },
    "kube-apiserver": { url: `${state.server}/readyz`, tls: adminTls(pki) },
    "kube-controller-manager": {
      url: `https://${hostPort(o.bindAddress, o.ports.controllerManager)}/healthz`,
      tls: { ...adminTls(pki), insecure: true },
    },
    "kube-scheduler": {
      url: `https://${hostPort(o.bindAddress, o.ports.scheduler)}/healthz`,
      tls: { ...adminTls(pki), insecure: true },
    },
  };
  const components: ComponentStatus[] = [];
  for (const p of state.processes) {
    const running = isOurs(p);
    let health = "-";
    const check = checks[p.name];
    if (running && check) {
      const r = await probe(check.url, check.tls);
      health = r.status === 0 ? `unreachable (${r.body})` : `${r.status} ${r.body.trim().slice(0, 60)}`;
    }
    components.push({ name: p.name, pid: p.pid, running, health });
  }
  return { state, components };
}

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { realClock, sleep } from "@switchyard/kube";
import { Progress, type ProgressSink } from "../progress.js";
import {
  cacheBinDir,
  type Env,
  missingBinariesMessage,
  resolveBinary,
  type UpstreamBinary,
} from "../upstream/binaries.js";
import {
  apiserverArgs,
  apiserverUrl,
  controllerManagerArgs,
  etcdArgs,
  type StatePaths,
  schedulerArgs,
  statePaths,
} from "./args.js";
import { type ClientTls, probe } from "./health.js";
import { writeKubeconfig } from "./kubeconfig.js";
import { type ControlPlaneInput, type ControlPlaneOptions, firstServiceIp, withDefaults } from "./options.js";
import { ensurePki, type Pki } from "./pki.js";
import { assertPortsFree } from "./ports.js";
import {
  isOurs,
  lastErrorLine,
  lastLines,
  type ProcessRecord,
  startDetached,
  stopProcess,
} from "./processes.js";

export type ComponentName = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";

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

export function writeState(paths: StatePaths, state: ControlPlaneState): void {
  writeFileSync(paths.stateFile, `${JSON.stringify(state, null, 2)}\n`);
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

function adminTls(pki: Pki): ClientTls {
  return { ca: pki.caCert, cert: pki.clients.admin.cert, key: pki.clients.admin.key };
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

/** Starts etcd, kube-apiserver and (unless skipped) the controller-manager and scheduler, and waits for /readyz. */
export async function up(partial: UpOptions = {}): Promise<ControlPlaneState> {
  const env = partial.env ?? process.env;
  const o = withDefaults(partial);
  const paths = statePaths(o.stateDir);
  const progress = new Progress("controlplane", partial.out ?? process.stderr);
  const started = Date.now();

  const previous = readState(o.stateDir);
  const running = previous?.processes.find(isOurs);
  if (running) {
    throw new Error(
      `a control plane is already running from ${o.stateDir} (${running.name} pid ${running.pid}); run \`switchyard-lab controlplane down\` first`,
    );
  }
  const wanted: UpstreamBinary[] = ["etcd", "kube-apiserver"];
  if (o.controllerManager) wanted.push("kube-controller-manager");
  if (o.scheduler) wanted.push("kube-scheduler");
  const missing = wanted.filter((name) => !resolveBinary(name, env).path);
  if (missing.length > 0) throw new Error(missingBinariesMessage(missing, cacheBinDir(env)));

  const ports = [
    { port: o.ports.etcdClient, what: "etcd client", flag: "--etcd-port" },
    { port: o.ports.etcdPeer, what: "etcd peer", flag: "--etcd-peer-port" },
    { port: o.ports.apiserver, what: "kube-apiserver", flag: "--apiserver-port" },
  ];
  if (o.controllerManager)
    ports.push({
      port: o.ports.controllerManager,
      what: "kube-controller-manager",
      flag: "--controller-manager-port",
    });
  if (o.scheduler) ports.push({ port: o.ports.scheduler, what: "kube-scheduler", flag: "--scheduler-port" });
  // The apiserver may listen elsewhere (a lab bridge) than the rest.
  await assertPortsFree(
    o.bindAddress,
    ports.filter((p) => p.what !== "kube-apiserver"),
  );
  await assertPortsFree(
    o.apiserverBindAddress,
    ports.filter((p) => p.what === "kube-apiserver"),
  );

  mkdirSync(paths.logs, { recursive: true });
  assertEtcdDataUnlocked(paths);
  progress.update("generating certificates", true);
  const pki = await ensurePki(paths.pki, {
    ips: [
      "127.0.0.1",
      o.bindAddress,
      o.apiserverBindAddress,
      o.advertiseAddress,
      firstServiceIp(o.serviceCidr),
      ...o.extraSans.filter((s) => /^[\d.:a-f]+$/i.test(s)),
    ],
    dnsNames: [
      "localhost",
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      "kubernetes.default.svc.cluster.local",
    ].concat(o.extraSans.filter((s) => !/^[\d.:a-f]+$/i.test(s))),
  });
  const server = apiserverUrl(o);
  writeKubeconfig(paths.adminKubeconfig, {
    server,
    caFile: pki.caCert,
    ...asClient(pki, "admin"),
    user: "kubernetes-admin",
  });
  writeKubeconfig(paths.controllerManagerKubeconfig, {
    server,
    caFile: pki.caCert,
    ...asClient(pki, "controller-manager"),
    user: "system:kube-controller-manager",
  });
  writeKubeconfig(paths.schedulerKubeconfig, {
    server,
    caFile: pki.caCert,
    ...asClient(pki, "scheduler"),
    user: "system:kube-scheduler",
  });

  const state: ControlPlaneState = {
    options: o,
    server,
    kubeconfig: paths.adminKubeconfig,
    processes: [],
    startedAt: new Date().toISOString(),
    startSeconds: 0,
  };
  const launch = (name: ComponentName, args: string[]) => {
    const record = startDetached(
      name,
      binaryPath(name, env),
      args,
      join(paths.logs, `${name}.log`),
      o.detached,
    );
    state.processes.push(record);
    writeState(paths, state); // written after each start so `down` finds whatever did start, even after a failure
    return record;
  };

  try {
    const etcd = launch("etcd", etcdArgs(o, paths));
    await waitFor(
      "etcd",
      etcd,
      async () =>
        (await probe(`http://${hostPort(o.bindAddress, o.ports.etcdClient)}/health`)).body.includes(
          '"health":"true"',
        ),
      o.readyTimeoutMs,
      progress,
    );
    const apiserver = launch("kube-apiserver", apiserverArgs(o, paths, pki));
    await waitFor(
      "kube-apiserver /readyz",
      apiserver,
      async () => (await probe(`${server}/readyz`, adminTls(pki))).status === 200,
      o.readyTimeoutMs,
      progress,
    );
    if (o.controllerManager) launch("kube-controller-manager", controllerManagerArgs(o, paths, pki));
    if (o.scheduler) launch("kube-scheduler", schedulerArgs(o, paths));
    for (const record of state.processes.filter(
      (p) => p.name === "kube-controller-manager" || p.name === "kube-scheduler",
    )) {
      const port = record.name === "kube-scheduler" ? o.ports.scheduler : o.ports.controllerManager;
      await waitFor(
        record.name,
        record,
        async () =>
          (
            await probe(`https://${hostPort(o.bindAddress, port)}/healthz`, {
              ...adminTls(pki),
              insecure: true,
            })
          ).status === 200,
        o.readyTimeoutMs,
        progress,
      );
    }
  } catch (err) {
    await stopAll(state.processes);
    throw err;
  }
  state.startSeconds = (Date.now() - started) / 1000;
  writeState(paths, state);
  progress.done(`ready at ${server}`);
  return state;
}

function asClient(pki: Pki, who: keyof Pki["clients"]) {
  return { certFile: pki.clients[who].cert, keyFile: pki.clients[who].key };
}

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
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
  const pki = {
    ca: join(stateDir, "pki", "ca.crt"),
    cert: join(stateDir, "pki", "admin.crt"),
    key: join(stateDir, "pki", "admin.key"),
  };
  const healthUrl: Record<string, string> = {
    etcd: `http://${hostPort(o.bindAddress, o.ports.etcdClient)}/health`,
    "kube-apiserver": `${state.server}/readyz`,
    "kube-controller-manager": `https://${hostPort(o.bindAddress, o.ports.controllerManager)}/healthz`,
    "kube-scheduler": `https://${hostPort(o.bindAddress, o.ports.scheduler)}/healthz`,
  };
  const components: ComponentStatus[] = [];
  for (const p of state.processes) {
    const running = isOurs(p);
    let health = "-";
    const urlFor = healthUrl[p.name];
    if (running && urlFor) {
      const r = await probe(urlFor, { ...pki, insecure: p.name !== "kube-apiserver" });
      health = r.status === 0 ? `unreachable (${r.body})` : `${r.status} ${r.body.trim().slice(0, 60)}`;
    }
    components.push({ name: p.name, pid: p.pid, running, health });
  }
  return { state, components };
}

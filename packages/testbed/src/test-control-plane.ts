/**
 * A real control plane for test suites: etcd + kube-apiserver (and optionally the controller-manager and
 * scheduler) on free loopback ports in a temporary folder. Start one per suite in `before`, stop it in `after`:
 * a start costs seconds, so tests inside a suite share it and isolate themselves with namespaces.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdClientUrl, statePaths } from "./controlplane/args.js";
import { type ComponentName, components } from "./controlplane/components.js";
import { type ControlPlaneState, down, up, writeState } from "./controlplane/controlplane.js";
import { type ClientTls, probe } from "./controlplane/health.js";
import { pkiPaths } from "./controlplane/pki.js";
import { checkPortFree, freeControlPlanePorts } from "./controlplane/ports.js";
import {
  isOurs,
  lastLines,
  type ProcessRecord,
  startDetached,
  stopProcess,
} from "./controlplane/processes.js";
import { resolveBinary, type UpstreamBinary } from "./upstream/binaries.js";

export interface TestControlPlane {
  /** Path of an admin kubeconfig (system:masters, client certificate). */
  kubeconfigPath: string;
  server: string;
  stateDir: string;
  /** etcd's client URL: https, and etcd wants a client certificate of its own CA (`etcdTls`). */
  etcdUrl: string;
  /** kubeadm's apiserver-etcd-client certificate and etcd's CA: a test's way past the apiserver into etcd. */
  etcdTls: ClientTls;
  /** POSTs to etcd's JSON gateway (`/v3/kv/put`, `/v3/kv/range`, ...) with `etcdTls`; throws unless 200. */
  etcdPost(path: string, body: unknown): Promise<{ header?: { revision?: string } }>;
  state: ControlPlaneState;
  /** SIGKILL kube-apiserver (etcd keeps the data), as a crash would. */
  killApiserver(): Promise<void>;
  /** Starts kube-apiserver again with the same flags and waits for /readyz. */
  startApiserver(): Promise<void>;
  /** SIGKILL etcd (its data stays; kube-apiserver keeps running and retrying), as a crash of the store would. */
  killEtcd(): Promise<void>;
  /** Starts etcd again with the same flags and data folder and waits until it is healthy. */
  startEtcd(): Promise<void>;
  /** Compacts etcd up to its current revision, so older resourceVersions answer 410 Gone. Returns it. */
  compactEtcd(): Promise<number>;
  stop(): Promise<void>;
}

export interface TestControlPlaneOptions {
  controllerManager?: boolean;
  scheduler?: boolean;
  /**
   * Where kube-apiserver listens (and the address its certificate names) instead of 127.0.0.1, e.g. the host's
   * address on Docker's bridge so that a container reaches it as a pod reaches the kubernetes Service.
   */
  apiserverBindAddress?: string;
  /** Admission plugins enabled on top of kube-apiserver's defaults, e.g. ["OwnerReferencesPermissionEnforcement"]. */
  extraAdmissionPlugins?: string[];
  /** --service-cluster-ip-range; two CIDRs, comma-separated, make a dual-stack cluster (10.96.0.0/16 when unset). */
  serviceCidr?: string;
}

const required: UpstreamBinary[] = ["etcd", "kube-apiserver"];

/** Why control-plane tests cannot run here, or undefined when they can. Use as `{ skip: missingControlPlane() }`. */
export function missingControlPlane(extra: UpstreamBinary[] = []): string | undefined {
  const missing = [...required, ...extra].filter((name) => !resolveBinary(name).path);
  return missing.length === 0
    ? undefined
    : `upstream binaries missing (${missing.join(", ")}): run npx switchyard-lab upstream build`;
}

export async function startControlPlane(options: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const stateDir = mkdtempSync(join(tmpdir(), "switchyard-cp-"));
  const state = await up({
    stateDir,
    detached: false,
    controllerManager: options.controllerManager ?? false,
    scheduler: options.scheduler ?? false,
    ...(options.apiserverBindAddress ? { apiserverBindAddress: options.apiserverBindAddress } : {}),
    ...(options.extraAdmissionPlugins ? { extraAdmissionPlugins: options.extraAdmissionPlugins } : {}),
    ...(options.serviceCidr ? { serviceCidr: options.serviceCidr } : {}),
    ports: await freeControlPlanePorts(),
    out: { write: () => {} },
  });
  const pki = pkiPaths(statePaths(stateDir).pki);
  const etcdUrl = etcdClientUrl(state.options);
  const etcdTls = {
    ca: pki.etcd.caCert,
    cert: pki.etcd.apiserverClient.cert,
    key: pki.etcd.apiserverClient.key,
  };
  const etcdPost = async (path: string, body: unknown) => {
    const res = await probe(`${etcdUrl}${path}`, etcdTls, 10_000, JSON.stringify(body));
    if (res.status !== 200) throw new Error(`etcd ${path}: ${res.status || "no answer"} ${res.body}`);
    return JSON.parse(res.body) as { header?: { revision?: string } };
  };
  return {
    kubeconfigPath: state.kubeconfig,
    server: state.server,
    stateDir,
    etcdUrl,
    etcdTls,
    etcdPost,
    state,
    async killApiserver() {
      await stopProcess(recordOf(state, "kube-apiserver"), 0);
    },
    async startApiserver() {
      await restart(state, stateDir, "kube-apiserver");
    },
    async killEtcd() {
      await stopProcess(recordOf(state, "etcd"), 0);
    },
    async startEtcd() {
      await restart(state, stateDir, "etcd");
    },
    async compactEtcd() {
      // Any range request returns the store's current revision in its header.
      const status = await etcdPost("/v3/kv/range", { key: Buffer.from("/").toString("base64"), limit: 1 });
      const revision = Number(status.header?.revision ?? 0);
      await etcdPost("/v3/kv/compaction", { revision: String(revision), physical: true });
      return revision;
    },
    async stop() {
      await down(stateDir);
    },
  };
}

function recordOf(state: ControlPlaneState, name: ComponentName): ProcessRecord {
  const record = state.processes.find((p) => p.name === name);
  if (!record) throw new Error(`no ${name} in this control plane`);
  return record;
}

/**
 * Starts a killed component again with the same command line, records it in the state file (so stop() and
 * `controlplane down` find the new process) and waits until it is ready as `up` judges it.
 */
async function restart(state: ControlPlaneState, stateDir: string, name: ComponentName): Promise<void> {
  const old = recordOf(state, name);
  // The caller killed it; a process still tearing down holds its ports, and starting over it would fail.
  for (let i = 0; i < 200 && isOurs(old); i++) await new Promise((r) => setTimeout(r, 50));
  if (isOurs(old)) throw new Error(`${name} (pid ${old.pid}) is still running: kill it before a restart`);
  const component = components.find((c) => c.name === name);
  if (!component) throw new Error(`unknown component ${name}`);
  const o = state.options;
  // The killed process's listening sockets may linger for a moment; wait until its ports can be bound.
  const host = name === "kube-apiserver" ? o.apiserverBindAddress : o.bindAddress;
  for (const { port } of component.ports(o)) {
    for (let i = 0; i < 200; i++) {
      try {
        await checkPortFree(host, port);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  const record = startDetached(old.name, old.bin, old.args, old.log, false);
  state.processes[state.processes.indexOf(old)] = record;
  writeState(statePaths(stateDir), state);
  const pki = pkiPaths(join(stateDir, "pki"));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (await component.ready(o, state.server, pki)) return;
    if (!isOurs(record)) throw new Error(`${name} exited on restart:\n${lastLines(record.log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready after restart:\n${lastLines(record.log)}`);
}

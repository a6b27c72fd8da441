/**
 * A real control plane for test suites: etcd + kube-apiserver (and optionally the controller-manager and
 * scheduler) on free loopback ports in a temporary folder. Start one per suite in `before`, stop it in `after`:
 * a start costs seconds, so tests inside a suite share it and isolate themselves with namespaces.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdClientUrl, statePaths } from "./controlplane/args.js";
import { adminTls } from "./controlplane/components.js";
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
  const tls = adminTls(pki);
  const apiserverIndex = state.processes.findIndex((p) => p.name === "kube-apiserver");
  const apiserver = (): ProcessRecord => {
    const record = state.processes[apiserverIndex];
    if (!record) throw new Error("no kube-apiserver in this control plane");
    return record;
  };
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
      await stopProcess(apiserver(), 0);
    },
    async startApiserver() {
      const old = apiserver();
      if (isOurs(old)) return;
      // The killed apiserver's listening socket may linger for a moment; wait until its port can be bound.
      const port = state.options.ports.apiserver;
      for (let i = 0; i < 200; i++) {
        try {
          await checkPortFree(state.options.apiserverBindAddress ?? state.options.bindAddress, port);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const record = startDetached(old.name, old.bin, old.args, old.log, false);
      state.processes[apiserverIndex] = record;
      // Recorded in the state file too, so stop() (and `controlplane down`) find the new process.
      writeState(statePaths(stateDir), state);
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        if ((await probe(`${state.server}/readyz`, tls)).status === 200) return;
        if (!isOurs(record)) throw new Error(`kube-apiserver exited on restart:\n${lastLines(record.log)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`kube-apiserver not ready after restart:\n${lastLines(record.log)}`);
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

// A kube-apiserver client and object builders for tests that run against a control plane. Everything
// these modules export is meant for tests, so they are re-exported whole.
export { freeControlPlanePorts } from "./controlplane/ports.js";
export * from "./testing/api.js";
export * from "./testing/cluster.js";
export * from "./testing/docker.js";
export * from "./testing/serviceaccount.js";
export * from "./testing/upstream-slice-controller.js";
export * from "./testing/yaml.js";
export { resolveBinary } from "./upstream/binaries.js";

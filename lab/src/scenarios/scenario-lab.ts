import type { Namespace } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { adminCredentials, isNotFound, KubeClient } from "../kubeapi/client.js";
import type { Exec } from "../netns/exec.js";
import type { LabPlan, NodePlan } from "../netns/plan.js";
import { type LabState, labPaths, readLabState } from "../netns/state.js";
import { Progress } from "../progress.js";
import { waitUntil } from "../stack/wait.js";
import type { ScenarioContext } from "./scenario.js";

/** What every scenario needs of the running lab: its plan, an API client, progress, and a deadline to bound hangs. */
export interface ScenarioLab {
  state: LabState;
  plan: LabPlan;
  client: KubeClient;
  exec: Exec;
  progress: Progress;
  /** A deadline for one wait; it only bounds a hang, nothing is measured with it. */
  deadline(ms?: number): number;
  /** Polls until `check` answers true (its strings say what is missing), within `ms`. */
  until(what: string, check: () => Promise<true | string>, ms?: number): Promise<void>;
  close(): void;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function openLab(ctx: ScenarioContext, label: string): ScenarioLab {
  const state = readLabState(ctx.stateDir);
  if (!state?.server) throw new Error(`no lab in ${ctx.stateDir}; run switchyard-lab up`);
  if (!state.stack)
    throw new Error(`scenario ${label} needs the stack; this lab runs without it (up --no-stack)`);
  const client = new KubeClient(adminCredentials(state.server, labPaths(ctx.stateDir).controlPlane));
  const progress = new Progress(label, ctx.out);
  const deadline = (ms = 180_000) => Date.now() + ms;
  return {
    state,
    plan: state.plan,
    client,
    exec: ctx.exec,
    progress,
    deadline,
    until: (what, check, ms) => waitUntil(what, check, deadline(ms), progress),
    close: () => client.close(),
  };
}

/**
 * Creates the scenario's namespace, runs `body`, and deletes the namespace afterwards whatever happened, waiting
 * until it is gone so that the next scenario starts on a clean lab. A namespace left by a crashed run is removed
 * first. `cleanup` runs before the namespace goes (things outside it, or pods no kubelet will finalize).
 */
export async function inNamespace<T>(
  lab: ScenarioLab,
  name: string,
  body: () => Promise<T>,
  cleanup: () => Promise<void> = async () => {},
): Promise<T> {
  await deleteNamespace(lab, name);
  await lab.client.call("POST", "/api/v1/namespaces", { metadata: { name } });
  try {
    await lab.until(`the default ServiceAccount of ${name}`, async () =>
      lab.client.call("GET", `/api/v1/namespaces/${name}/serviceaccounts/default`).then(() => true as const),
    );
    return await body();
  } finally {
    lab.progress.update(`cleaning up namespace ${name}`, true);
    await cleanup().catch((err: Error) => lab.progress.update(`cleanup: ${err.message}`, true));
    await deleteNamespace(lab, name);
  }
}

async function deleteNamespace(lab: ScenarioLab, name: string): Promise<void> {
  const path = `/api/v1/namespaces/${name}`;
  try {
    await lab.client.call("DELETE", path);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  await lab.until(
    `namespace ${name} to be deleted`,
    async () => {
      try {
        const ns = await lab.client.call<Namespace>("GET", path);
        return `phase ${ns.status?.phase ?? "?"}`;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    300_000,
  );
}

/** The EndpointSlices of one Service, as the proxies see them. */
export async function serviceSlices(lab: ScenarioLab, ns: string, service: string): Promise<EndpointSlice[]> {
  const selector = encodeURIComponent(`kubernetes.io/service-name=${service}`);
  const list = await lab.client.call<{ items: EndpointSlice[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${selector}`,
  );
  return list.items;
}

export const readyEndpoints = (slices: readonly EndpointSlice[]) =>
  slices.reduce((n, s) => n + (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length, 0);

export const allEndpoints = (slices: readonly EndpointSlice[]) =>
  slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);

/** Nodes of the lab that run pods (the netns nodes), in plan order. */
export const labNodes = (lab: ScenarioLab): NodePlan[] => lab.plan.nodeList;

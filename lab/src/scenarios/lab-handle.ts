import { adminCredentials, KubeClient } from "../kubeapi/client.js";
import type { Exec } from "../netns/exec.js";
import type { LabPlan } from "../netns/plan.js";
import { type LabState, labPaths, readLabState } from "../netns/state.js";
import { Progress } from "../progress.js";
import type { ScenarioContext } from "./scenario.js";

/** What every scenario works with: the lab's state and plan, an admin client, the exec, a progress line. */
export interface LabHandle {
  state: LabState;
  plan: LabPlan;
  client: KubeClient;
  exec: Exec;
  progress: Progress;
  /** A deadline `ms` from now: bounds a wait that hangs, never measures anything. */
  deadline(ms?: number): number;
  close(): void;
}

export function openLab(ctx: ScenarioContext, label: string): LabHandle {
  const state = readLabState(ctx.stateDir);
  if (!state?.server) throw new Error(`no lab in ${ctx.stateDir}; run switchyard-lab up`);
  if (!state.stack) throw new Error(`scenario ${label}: this lab runs without the stack (up --no-stack)`);
  const client = new KubeClient(adminCredentials(state.server, labPaths(ctx.stateDir).controlPlane));
  return {
    state,
    plan: state.plan,
    client,
    exec: ctx.exec,
    progress: new Progress(label, ctx.out, Date.now, 5_000),
    deadline: (ms = 180_000) => Date.now() + ms,
    close: () => client.close(),
  };
}

/** A `--set` list parameter: "1000,5000" → ["1000", "5000"]; the default when unset. */
export function listParam(ctx: ScenarioContext, name: string, fallback: readonly string[]): string[] {
  const raw = ctx.params.get(name);
  if (raw === undefined) return [...fallback];
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error(`scenario: --set ${name}=${raw} is an empty list`);
  return items;
}

/** A `--set` string parameter with its default. */
export const stringParam = (ctx: ScenarioContext, name: string, fallback: string): string =>
  ctx.params.get(name) ?? fallback;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a command in a namespace; "" when it fails (a probe's failure is data, not an error). */
export const inNetns = (exec: Exec, netns: string, argv: readonly string[]) =>
  exec(["ip", "netns", "exec", netns, ...argv]).catch(() => "");

/** The network namespace of a pod of this lab: `<prefix>-pod-n<node>-<uid8>`, found by its uid. */
export async function podNetns(exec: Exec, prefix: string, uid: string): Promise<string | undefined> {
  const list = await exec(["ip", "netns", "list"]);
  return list
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .find((n) => n.startsWith(`${prefix}-pod-`) && n.endsWith(`-${uid.slice(0, 8)}`));
}

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ProcessRecord } from "@switchyard/testbed/controlplane";
import { ensurePrivateDir } from "@switchyard/testbed/private-files";
import type { ProxyMode, StackKind } from "../stack/manifests.js";
import type { StepTime } from "../timing/step-times.js";
import type { LabPlan } from "./plan.js";

/**
 * The runtime a lab in a state folder was brought up with, recorded in lab.json so `down`, `status` and
 * `kubeconfig` act on the right one. A kind lab's lab.json is src/kind/state.ts's; it shares `runtime`,
 * `kubeconfig` and `server` with this one (what `switchyard-lab kubectl` reads).
 */
export type LabRuntime = "netns" | "kind";

/** What `up` leaves for `down`, `status`, the node agents and tests. */
export interface LabState {
  runtime: "netns";
  plan: LabPlan;
  server: string;
  kubeconfig: string;
  agents: ProcessRecord[];
  startedAt: string;
  /** Seconds from `up` until it returned (nodes Ready, and the stack working when deployed); absent while `up` runs. */
  upSeconds?: number;
  /** Seconds from the start of bring-up until every node was Ready. */
  nodesSeconds?: number;
  /** Where `up` spent its time, step by step (the table `up` prints). */
  steps?: StepTime[];
  /**
   * The stack, and how long deploying it until it worked took: Switchyard's from apps/<app>/deploy, or upstream's
   * as kubeadm installs it. `kind` is absent in labs made before upstream's could be chosen: Switchyard's.
   */
  stack?: { kind?: StackKind; proxyMode: ProxyMode; seconds: number };
}

export interface LabPaths {
  dir: string;
  stateFile: string;
  journal: string;
  controlPlane: string;
  logs: string;
  /** Per pod: resolv.conf, the service-account files, container logs. */
  pods: string;
  /** The images' layers the node agents make (image-layer.ts) and porter's TLS pair. */
  images: string;
}

export function labPaths(dir: string): LabPaths {
  return {
    dir,
    stateFile: join(dir, "lab.json"),
    journal: join(dir, "journal.jsonl"),
    controlPlane: join(dir, "controlplane"),
    logs: join(dir, "logs"),
    pods: join(dir, "pods"),
    images: join(dir, "images"),
  };
}

export function defaultLabDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "switchyard", "lab");
}

/**
 * The lab folder a command acts on when none is given: SWITCHYARD_LAB_DIR (what `up`'s summary tells a lab in
 * another folder to export, so every later command finds it), else the default.
 */
export function currentLabDir(env: Record<string, string | undefined> = process.env): string {
  return env.SWITCHYARD_LAB_DIR || defaultLabDir(env);
}

/** For `up`'s summary: how the commands it suggests find a lab outside the default folder; none for the default. */
export function labDirHint(dir: string, env: Record<string, string | undefined> = process.env): string[] {
  if (dir === currentLabDir(env)) return [];
  return [`this lab is in ${dir}; for the commands below: export SWITCHYARD_LAB_DIR=${dir}`];
}

export function readLabState(dir: string): LabState | undefined {
  const file = labPaths(dir).stateFile;
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as LabState;
}

/** The runtime of the lab in `dir`, or undefined when there is none (lab.json files without one are netns). */
export function readLabRuntime(dir: string): LabRuntime | undefined {
  const file = labPaths(dir).stateFile;
  if (!existsSync(file)) return undefined;
  const { runtime } = JSON.parse(readFileSync(file, "utf8")) as { runtime?: LabRuntime };
  return runtime ?? "netns";
}

export function writeLabState(dir: string, state: LabState): void {
  ensurePrivateDir(dir);
  writeFileSync(labPaths(dir).stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

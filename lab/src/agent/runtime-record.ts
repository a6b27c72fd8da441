import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerState } from "kubernetes-types/core/v1.js";

/**
 * What the agent keeps on disk of its pods, as a container runtime keeps its sandboxes and containers, so that a
 * restarted agent finds them: a sandbox record per pod (`sandbox.json` in the pod's folder) and one record per
 * container (`runtime/<name>.json`). The pods' folder is the lab's, shared by its agents: a record names its node.
 */
export interface SandboxRecord {
  uid: string;
  node: string;
  /** The pod's folder. */
  dir: string;
  /** The pod's network namespace (the node's for hostNetwork pods). */
  netns: string;
  podIps: string[];
  /** status.startTime, kept as the first agent set it. */
  startTime: string;
}

/** One container as its last instance left it. */
export interface ContainerRecord {
  state: ContainerState;
  lastState: ContainerState;
  restartCount: number;
  /** The running instance: its process and shim, each with its start time (processStartTicks). */
  process?: { pid: number; pidStart: number; shimPid: number; shimStart: number; exitFile: string };
  /** The memory cgroup's OOM kill count when the instance started. */
  oomKillsAtStart: number;
}

const sandboxFile = (dir: string) => join(dir, "sandbox.json");

/** Written whole and renamed into place: a crash mid-write leaves the previous record, never half of one. */
function writeJson(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(value));
  renameSync(`${file}.tmp`, file);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

export function writeSandboxRecord(record: SandboxRecord): void {
  writeJson(sandboxFile(record.dir), record);
}

/** Forgets the sandbox: its pod has ended here, nothing of it is to be adopted. */
export function removeSandboxRecord(dir: string): void {
  rmSync(sandboxFile(dir), { force: true });
}

/** The sandboxes the node's previous agent left, by pod uid. */
export function readSandboxRecords(podsDir: string, node: string): Map<string, SandboxRecord> {
  const found = new Map<string, SandboxRecord>();
  if (!existsSync(podsDir)) return found;
  for (const entry of readdirSync(podsDir)) {
    const record = readJson<SandboxRecord>(sandboxFile(join(podsDir, entry)));
    if (record?.node === node && record.uid) found.set(record.uid, record);
  }
  return found;
}

/** Where a pod's container records and their shims' exit files are. */
export const runtimeDir = (podDir: string) => join(podDir, "runtime");

export function writeContainerRecord(podDir: string, name: string, record: ContainerRecord): void {
  mkdirSync(runtimeDir(podDir), { recursive: true });
  writeJson(join(runtimeDir(podDir), `${name}.json`), record);
}

export function readContainerRecord(podDir: string, name: string): ContainerRecord | undefined {
  return readJson<ContainerRecord>(join(runtimeDir(podDir), `${name}.json`));
}

/** Every container record of a pod. */
export function readContainerRecords(podDir: string): ContainerRecord[] {
  const dir = runtimeDir(podDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => readJson<ContainerRecord>(join(dir, f)) ?? []);
}

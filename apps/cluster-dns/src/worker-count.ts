// What `-workers auto` means: one process per core the container may use, as Go 1.25+ sizes GOMAXPROCS from
// the CPU limit, and no more than its memory limit holds.
import { availableParallelism } from "node:os";
import { type ContainerLimits, readContainerLimits } from "./container-limits.js";

/** The most worker processes `-workers` takes; more than the cores only costs memory. */
export const MAX_WORKERS = 64;

/**
 * What `-workers auto` budgets per process in a memory limit. A worker holds its own informers, cache and
 * V8 heap: two workers under kubeadm's 170Mi peaked at 128 MiB charged to the container with 1000 Services and
 * 60 s of dnsperf (test/image-kubeadm.test.ts's load on the image running two workers, 2026-12-07), one process at 59 MiB; a worker's
 * informers grow with the cluster. 80 MiB keeps kubeadm's 170Mi at one process, where CoreDNS's own limit
 * leaves a larger cluster room, and gives two workers from 192Mi.
 */
export const WORKER_BUDGET_BYTES = 80 * 2 ** 20;
export const PRIMARY_BUDGET_BYTES = 32 * 2 ** 20;

/**
 * Workers for `auto`: the CPUs this process may run on, at most the CPU limit rounded up (Go's GOMAXPROCS
 * rounds a limit below 2 up to 2; a process costs more than a Go thread, so here a limit of 1 or less gives
 * 1), and at most as many as fit the memory limit beside the primary. Always at least 1.
 */
export function autoWorkers(cores: number, limits: ContainerLimits): number {
  let n = cores;
  if (limits.cpus !== undefined) n = Math.min(n, Math.ceil(limits.cpus));
  if (limits.memoryBytes !== undefined)
    n = Math.min(n, Math.floor((limits.memoryBytes - PRIMARY_BUDGET_BYTES) / WORKER_BUDGET_BYTES));
  return Math.max(1, Math.min(n, MAX_WORKERS));
}

/** `auto` on this machine, in this process's cgroups. */
export function hostAutoWorkers(): number {
  return autoWorkers(availableParallelism(), readContainerLimits());
}

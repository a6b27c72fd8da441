// The kubelet eviction manager's local-storage checks (localStorageEviction in pkg/kubelet/eviction), as a pure
// verdict over what the agent measured: an emptyDir over its sizeLimit, then the pod over the sum of its
// containers' ephemeral-storage limits, then one container over its own; the first that holds names the eviction.
import { parseQuantity } from "@switchyard/basics";
import type { Pod } from "kubernetes-types/core/v1.js";
import { isSidecar } from "./init-containers.js";

type PodContainer = NonNullable<Pod["spec"]>["containers"][number];

/** Bytes in use: each container's writable layer and logs, each disk-backed emptyDir's files. */
export interface PodStorageUsage {
  containers: ReadonlyMap<string, number>;
  emptyDirs: ReadonlyMap<string, number>;
}

const limitText = (c: PodContainer) => c.resources?.limits?.["ephemeral-storage"];

/** Whether the agent has anything to watch: a container limit or an emptyDir sizeLimit. */
export function hasStorageLimits(pod: Pod): boolean {
  const spec = pod.spec;
  return (
    [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].some((c) => limitText(c) !== undefined) ||
    (spec?.volumes ?? []).some((v) => v.emptyDir?.sizeLimit !== undefined)
  );
}

/**
 * The pod's ephemeral-storage limit as the kubelet's PodLimits sums it: main containers and sidecars added up, or
 * a regular init container's own limit plus the sidecars started before it when that is larger (init containers
 * run one at a time). Undefined when no container has one.
 */
export function podStorageLimit(pod: Pod): number | undefined {
  const spec = pod.spec;
  const all = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  if (!all.some((c) => limitText(c) !== undefined)) return undefined;
  const bytes = (c: PodContainer) => parseQuantity(limitText(c)) ?? 0;
  let sidecars = 0;
  let largestInit = 0;
  for (const c of spec?.initContainers ?? []) {
    if (isSidecar(c)) sidecars += bytes(c);
    else largestInit = Math.max(largestInit, bytes(c) + sidecars);
  }
  const main = (spec?.containers ?? []).reduce((total, c) => total + bytes(c), 0);
  return Math.max(main + sidecars, largestInit);
}

const BINARY = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL = ["", "k", "M", "G", "T", "P", "E"];

/** A byte count as Go's Quantity prints it in the format given: the largest suffix that divides it evenly. */
export function formatBytes(bytes: number, binary: boolean): string {
  const [base, suffixes] = binary ? [1024, BINARY] : [1000, DECIMAL];
  let value = bytes;
  let i = 0;
  while (i < suffixes.length - 1 && value !== 0 && value % base === 0) {
    value /= base;
    i++;
  }
  return `${value}${suffixes[i]}`;
}

/** Why the eviction manager would evict the pod now, in its words; undefined: it stays. */
export function storageEviction(pod: Pod, usage: PodStorageUsage): string | undefined {
  const spec = pod.spec;
  for (const v of spec?.volumes ?? []) {
    if (!v.emptyDir || v.emptyDir.medium === "Memory") continue;
    const limit = parseQuantity(v.emptyDir.sizeLimit);
    if (limit && limit > 0 && (usage.emptyDirs.get(v.name) ?? 0) > limit)
      return `Usage of EmptyDir volume "${v.name}" exceeds the limit "${v.emptyDir.sizeLimit}". `;
  }
  const podLimit = podStorageLimit(pod);
  const total = [...usage.containers.values(), ...usage.emptyDirs.values()].reduce((a, b) => a + b, 0);
  if (podLimit !== undefined && total > podLimit) {
    // A sum keeps the format of the first limit it was made from, as Go's Quantity.Add.
    const first = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map(limitText).find(Boolean);
    const shown = formatBytes(podLimit, first?.endsWith("i") ?? true);
    return `Pod ephemeral local storage usage exceeds the total limit of containers ${shown}. `;
  }
  const watched = [...(spec?.containers ?? []), ...(spec?.initContainers ?? []).filter(isSidecar)];
  for (const c of watched) {
    const limit = parseQuantity(limitText(c));
    if (limit && (usage.containers.get(c.name) ?? 0) > limit)
      return `Container ${c.name} exceeded its local ephemeral storage limit "${limitText(c)}". `;
  }
  return undefined;
}

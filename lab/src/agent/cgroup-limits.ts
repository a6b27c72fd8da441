import { parseMilliQuantity, parseQuantity } from "@switchyard/basics";
import type { Container, Pod, ResourceRequirements } from "kubernetes-types/core/v1.js";

/**
 * What a container's cgroup files say, from its resources, as the kubelet computes them (pkg/kubelet/cm
 * helpers_linux.go and kuberuntime_container_linux.go at v1.37.2) and runc writes them (opencontainers/cgroups
 * v0.0.7 for cgroup v2's weight): CPU shares from the request, a CFS quota over a 100 ms period from the limit,
 * the memory limit in bytes. Values are files' contents, keyed by file name.
 */
export interface CgroupLimitFiles {
  /** cgroup v1's memory controller. */
  memory: Record<string, string>;
  /** cgroup v1's cpu controller. */
  cpu: Record<string, string>;
  /** One cgroup v2 directory's files, where the host's cgroup2 has the memory and cpu controllers. */
  unified: Record<string, string>;
}

const MIN_SHARES = 2;
const MAX_SHARES = 262_144;
/** The kubelet's CFS period (the CPUCFSQuotaPeriod gate off): 100 ms. */
export const QUOTA_PERIOD_US = 100_000;
const MIN_QUOTA_US = 1000;

/** The kubelet's MilliCPUToShares: 1024 per CPU requested, 2 when nothing is. */
export function milliCpuToShares(milliCpu: number): number {
  if (milliCpu === 0) return MIN_SHARES;
  return Math.min(Math.max(Math.floor((milliCpu * 1024) / 1000), MIN_SHARES), MAX_SHARES);
}

/** The kubelet's MilliCPUToQuota over QUOTA_PERIOD_US: 0 (no quota) without a limit, at least 1 ms. */
export function milliCpuToQuota(milliCpu: number): number {
  if (milliCpu === 0) return 0;
  return Math.max(Math.floor((milliCpu * QUOTA_PERIOD_US) / 1000), MIN_QUOTA_US);
}

/** runc's shares to cgroup v2 weight: a quadratic in log2(shares) through (2, 1), (1024, 100) and (262144, 10000). */
export function sharesToWeight(shares: number): number {
  if (shares <= 2) return 1;
  if (shares >= MAX_SHARES) return 10_000;
  const l = Math.log2(shares);
  return Math.ceil(10 ** ((l * l + 125 * l) / 612 - 7 / 34));
}

/** The files of one container's cgroups; a quantity the apiserver would have refused reads as none. */
export function cgroupLimitFiles(container: Pick<Container, "resources">): CgroupLimitFiles {
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  return limitFiles(
    milliCpuToShares(milli(requests.cpu)),
    milliCpuToQuota(milli(limits.cpu)),
    limits.memory === undefined ? undefined : parseQuantity(limits.memory),
  );
}

/**
 * The files of the pod's own cgroup, the parent of its containers', as the kubelet's ResourceConfigForPod makes
 * them: shares from the pod's CPU request; a quota and a memory limit from the pod's limits only where every
 * container, init ones too, declares that limit (or the pod-level resources do); a BestEffort pod gets the least
 * shares and nothing else. A pod's request or limit is resourcehelper's: the larger of the main containers with
 * the sidecars, and of each init container with the sidecars started before it.
 */
export function podCgroupLimitFiles(pod: Pod): CgroupLimitFiles {
  const spec = pod.spec;
  // Pod-level resources (the PodLevelResources gate) are newer than the kubernetes-types this repository pins.
  const podResources = (spec as { resources?: ResourceRequirements } | undefined)?.resources;
  const inits = spec?.initContainers ?? [];
  const all = [...inits, ...(spec?.containers ?? [])];
  const podLimits = podResources?.limits ?? {};
  const declared = (name: "cpu" | "memory") =>
    podLimits[name] !== undefined || all.every((c) => quantityOf(c.resources?.limits?.[name], name) > 0);
  const total = (kind: "requests" | "limits", name: "cpu" | "memory") => {
    const own = podResources?.[kind]?.[name];
    if (own !== undefined) return quantityOf(own, name);
    const value = (c: (typeof all)[number]) => quantityOf(c.resources?.[kind]?.[name], name);
    let sidecars = 0;
    let initMax = 0;
    for (const c of inits) {
      if (c.restartPolicy === "Always") sidecars += value(c);
      else initMax = Math.max(initMax, value(c) + sidecars);
    }
    const main = (spec?.containers ?? []).reduce((sum, c) => sum + value(c), 0) + sidecars;
    return Math.max(main, initMax);
  };
  const bestEffort = all.every(
    (c) =>
      Object.keys(c.resources?.requests ?? {}).length + Object.keys(c.resources?.limits ?? {}).length === 0,
  );
  const files =
    bestEffort && !podResources
      ? limitFiles(MIN_SHARES, 0, undefined)
      : limitFiles(
          milliCpuToShares(total("requests", "cpu")),
          declared("cpu") ? milliCpuToQuota(total("limits", "cpu")) : 0,
          declared("memory") ? total("limits", "memory") : undefined,
        );
  // The kubelet asks for group OOM kills per container, not per pod.
  delete files.unified["memory.oom.group"];
  return files;
}

const milli = (text: string | undefined) => (text === undefined ? 0 : (parseMilliQuantity(text) ?? 0));
/** CPU in millicores, memory in bytes; 0 when absent. */
const quantityOf = (text: string | undefined, name: "cpu" | "memory") =>
  name === "cpu" ? milli(text) : text === undefined ? 0 : (parseQuantity(text) ?? 0);

/** The files for CPU shares, a quota (0: none) and a memory limit (undefined: none), in both cgroup versions. */
function limitFiles(shares: number, quota: number, memoryBytes: number | undefined): CgroupLimitFiles {
  const memory: Record<string, string> = memoryBytes ? { "memory.limit_in_bytes": String(memoryBytes) } : {};
  const cpu: Record<string, string> = {
    "cpu.shares": String(shares),
    "cpu.cfs_period_us": String(QUOTA_PERIOD_US),
    "cpu.cfs_quota_us": quota ? String(quota) : "-1",
  };
  const unified: Record<string, string> = {
    "cpu.weight": String(sharesToWeight(shares)),
    "cpu.max": `${quota || "max"} ${QUOTA_PERIOD_US}`,
    "memory.max": memoryBytes ? String(memoryBytes) : "max",
    // The kubelet's default (singleProcessOOMKill false): an OOM kill ends every process of the container.
    "memory.oom.group": "1",
  };
  return { memory, cpu, unified };
}

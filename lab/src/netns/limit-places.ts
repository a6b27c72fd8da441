/**
 * Where a lab's pods get their CPU and memory limits: the hierarchies that hold the memory and cpu controllers on
 * this host. A cgroup2-only host (the controllers listed in its root's cgroup.controllers) keeps them in the pods'
 * cgroup2 directories below each node's; a hybrid host (cgroup v1 memory and cpu mounted beside a cgroup2 without
 * them) in a tree of the same shape, switchyard/<prefix>/<node>, in each v1 hierarchy.
 */
export type LimitMounts = { kind: "cgroup2" } | { kind: "v1"; memory: string; cpu: string };

/**
 * The hierarchies with the memory and cpu controllers, from /proc/self/mountinfo and the cgroup2 root's
 * cgroup.controllers (empty when there is none); undefined when the host has no such pair.
 */
export function limitMounts(mountinfo: string, cgroup2Controllers: string): LimitMounts | undefined {
  const v2 = cgroup2Controllers.split(/\s+/);
  if (v2.includes("memory") && v2.includes("cpu")) return { kind: "cgroup2" };
  const v1 = mountinfo
    .split("\n")
    .map((line) => {
      const [fields = "", after = ""] = line.split(" - ");
      const [type, , superOptions = ""] = after.split(" ");
      return { point: fields.split(" ")[4] ?? "", type, options: superOptions.split(",") };
    })
    .filter((m) => m.type === "cgroup");
  const memory = v1.find((m) => m.options.includes("memory"))?.point;
  const cpu = v1.find((m) => m.options.includes("cpu"))?.point;
  return memory && cpu ? { kind: "v1", memory, cpu } : undefined;
}

/** The lab's folder in a v1 hierarchy; each node's is below it, made by its agent as its pods need it. */
export const labLimitDir = (mount: string, prefix: string) => `${mount}/switchyard/${prefix}`;

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ReadFile, readContainerLimits } from "../src/container-limits.js";
import { autoWorkers } from "../src/worker-count.js";

const MiB = 2 ** 20;

/** A fake /proc and /sys/fs/cgroup: each path's text. */
function files(entries: Record<string, string>): ReadFile {
  return (path) => entries[path];
}

// This machine's layout (cgroup v1 hybrid), trimmed: cpu and memory on v1, an empty cgroup2 beside them.
const HYBRID_MOUNTINFO = [
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

describe("container limits", () => {
  test("cgroup v1: the quota over the period, and the lowest limit on the way up to the mount", () => {
    const read = files({
      "/proc/self/mountinfo": HYBRID_MOUNTINFO,
      "/proc/self/cgroup": "4:memory:/pods/dns\n1:cpu:/pods/dns\n0::/\n",
      "/sys/fs/cgroup/cpu/pods/dns/cpu.cfs_quota_us": "-1\n",
      "/sys/fs/cgroup/cpu/pods/dns/cpu.cfs_period_us": "100000\n",
      "/sys/fs/cgroup/cpu/pods/cpu.cfs_quota_us": "150000\n",
      "/sys/fs/cgroup/cpu/pods/cpu.cfs_period_us": "100000\n",
      "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
      "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
      "/sys/fs/cgroup/memory/pods/dns/memory.limit_in_bytes": `${170 * MiB}\n`,
      "/sys/fs/cgroup/memory/pods/memory.limit_in_bytes": "9223372036854771712\n",
      "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
    });
    assert.deepEqual(readContainerLimits(read), { cpus: 1.5, memoryBytes: 170 * MiB });
  });

  test("cgroup v2 inside a cgroup namespace: cpu.max and memory.max, `max` meaning none", () => {
    const read = files({
      "/proc/self/mountinfo": "30 25 0:26 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw,nsdelegate",
      "/proc/self/cgroup": "0::/\n",
      "/sys/fs/cgroup/cpu.max": "250000 100000\n",
      "/sys/fs/cgroup/memory.max": "max\n",
    });
    assert.deepEqual(readContainerLimits(read), { cpus: 2.5 });
  });

  test("a v2 host path below a bind-mounted root; no limits anywhere is none", () => {
    const read = files({
      "/proc/self/mountinfo": "30 25 0:26 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 rw",
      "/proc/self/cgroup": "0::/kubepods/pod1/dns\n",
      "/sys/fs/cgroup/pod1/dns/cpu.max": "max 100000\n",
      "/sys/fs/cgroup/pod1/dns/memory.max": `${256 * MiB}\n`,
      "/sys/fs/cgroup/pod1/cpu.max": "50000 100000\n",
    });
    assert.deepEqual(readContainerLimits(read), { cpus: 0.5, memoryBytes: 256 * MiB });
    assert.deepEqual(readContainerLimits(files({})), {});
  });

  test("a mount path with a space comes escaped in mountinfo", () => {
    const read = files({
      "/proc/self/mountinfo": "32 31 0:29 / /cg\\040root rw - cgroup cgroup rw,cpu,cpuacct",
      "/proc/self/cgroup": "1:cpu,cpuacct:/a\n",
      "/cg root/a/cpu.cfs_quota_us": "300000",
      "/cg root/a/cpu.cfs_period_us": "100000",
    });
    assert.deepEqual(readContainerLimits(read), { cpus: 3 });
  });
});

describe("-workers auto", () => {
  test("one per core, at most the CPU limit rounded up, never below 1", () => {
    assert.equal(autoWorkers(8, {}), 8);
    assert.equal(autoWorkers(8, { cpus: 1.5 }), 2);
    assert.equal(autoWorkers(8, { cpus: 0.1 }), 1);
    assert.equal(autoWorkers(2, { cpus: 6 }), 2);
  });

  test("no more than the memory limit holds beside the primary", () => {
    // 32 MiB for the primary, 80 MiB for each worker: kubeadm's 170Mi stays one process.
    assert.equal(autoWorkers(8, { memoryBytes: 170 * MiB }), 1);
    assert.equal(autoWorkers(8, { memoryBytes: 192 * MiB }), 2);
    assert.equal(autoWorkers(8, { memoryBytes: 512 * MiB }), 6);
    assert.equal(autoWorkers(2, { cpus: 4, memoryBytes: 512 * MiB }), 2);
  });
});

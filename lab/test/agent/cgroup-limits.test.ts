import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  cgroupLimitFiles,
  milliCpuToQuota,
  milliCpuToShares,
  sharesToWeight,
} from "../../src/agent/cgroup-limits.js";

describe("a container's cgroup files, as the kubelet and runc compute them", () => {
  test("shares from the request: 1024 per CPU, at least 2", () => {
    assert.deepEqual([0, 1, 100, 250, 1000, 300_000].map(milliCpuToShares), [2, 2, 102, 256, 1024, 262_144]);
  });

  test("quota over a 100 ms period from the limit: none without one, at least 1 ms", () => {
    assert.deepEqual([0, 5, 250, 1500].map(milliCpuToQuota), [0, 1000, 25_000, 150_000]);
  });

  test("cgroup v2 weight: runc's quadratic (the values Go's ConvertCPUSharesToCgroupV2Value gives)", () => {
    // Computed with opencontainers/cgroups v0.0.7's function under go run, 2026-12-07.
    assert.deepEqual(
      [2, 3, 102, 256, 1024, 2048, 262_143, 262_144].map(sharesToWeight),
      [1, 2, 17, 35, 100, 174, 10_000, 10_000],
    );
  });

  test("a Burstable container: every file from its requests and limits", () => {
    const files = cgroupLimitFiles({
      resources: { requests: { cpu: "100m", memory: "16Mi" }, limits: { cpu: "250m", memory: "64Mi" } },
    });
    assert.deepEqual(files, {
      memory: { "memory.limit_in_bytes": "67108864" },
      cpu: { "cpu.shares": "102", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "25000" },
      unified: {
        "cpu.weight": "17",
        "cpu.max": "25000 100000",
        "memory.max": "67108864",
        "memory.oom.group": "1",
      },
    });
  });

  test("a BestEffort container: the least shares, no quota, no memory limit", () => {
    const files = cgroupLimitFiles({});
    assert.deepEqual(files.memory, {});
    assert.equal(files.cpu["cpu.shares"], "2");
    assert.equal(files.cpu["cpu.cfs_quota_us"], "-1");
    assert.equal(files.unified["cpu.max"], "max 100000");
    assert.equal(files.unified["memory.max"], "max");
  });
});

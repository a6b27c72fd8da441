import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import {
  cgroupLimitFiles,
  milliCpuToQuota,
  milliCpuToShares,
  podCgroupLimitFiles,
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

  test("the pod's own cgroup: summed requests and limits, the larger of the mains with sidecars and each init", () => {
    const c = (name: string, cpu: [string, string], memory?: string, restartPolicy?: string): Container => ({
      name,
      ...(restartPolicy ? { restartPolicy } : {}),
      resources: {
        requests: { cpu: cpu[0] },
        limits: { cpu: cpu[1], ...(memory ? { memory } : {}) },
      },
    });
    const pod = (containers: Container[], initContainers: Container[] = []): Pod => ({
      spec: { containers, initContainers },
    });
    // Two mains and a sidecar: 100m+200m+50m requested, 250m+500m+100m limited, 64+64+32 MiB.
    const withSidecar = podCgroupLimitFiles(
      pod(
        [c("a", ["100m", "250m"], "64Mi"), c("b", ["200m", "500m"], "64Mi")],
        [c("s", ["50m", "100m"], "32Mi", "Always")],
      ),
    );
    assert.equal(withSidecar.cpu["cpu.shares"], String(milliCpuToShares(350)));
    assert.equal(withSidecar.cpu["cpu.cfs_quota_us"], "85000");
    assert.equal(withSidecar.memory["memory.limit_in_bytes"], String(160 * 2 ** 20));
    assert.equal(
      withSidecar.unified["memory.oom.group"],
      undefined,
      "the kubelet sets it per container only",
    );
    // An init container larger than the mains sets the pod's limit.
    const bigInit = podCgroupLimitFiles(pod([c("a", ["100m", "200m"], "64Mi")], [c("i", ["1", "2"], "1Gi")]));
    assert.equal(bigInit.cpu["cpu.cfs_quota_us"], "200000");
    assert.equal(bigInit.memory["memory.limit_in_bytes"], String(2 ** 30));
    // One container without a memory limit: no memory limit for the pod, its quota still set.
    const partial = podCgroupLimitFiles(pod([c("a", ["100m", "200m"], "64Mi"), c("b", ["100m", "200m"])]));
    assert.deepEqual(partial.memory, {});
    assert.equal(partial.cpu["cpu.cfs_quota_us"], "40000");
    // BestEffort: the least shares, nothing else.
    const none = podCgroupLimitFiles(pod([{ name: "a" }]));
    assert.deepEqual([none.cpu["cpu.shares"], none.cpu["cpu.cfs_quota_us"], none.memory], ["2", "-1", {}]);
  });
});

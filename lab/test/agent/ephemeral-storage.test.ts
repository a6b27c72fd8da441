// The eviction manager's local-storage verdict (ephemeral-storage.ts) in its words, and the folder sizes the
// agent measures (storage-usage.ts) on real files.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import {
  formatBytes,
  hasStorageLimits,
  podStorageLimit,
  storageEviction,
} from "../../src/agent/ephemeral-storage.js";
import { dirBytes, writableLayerBytes } from "../../src/agent/storage-usage.js";

const MiB = 2 ** 20;
const limited = (name: string, limit?: string, restartPolicy?: string) => ({
  name,
  ...(restartPolicy ? { restartPolicy } : {}),
  ...(limit ? { resources: { limits: { "ephemeral-storage": limit } } } : {}),
});
const pod = (spec: Partial<NonNullable<Pod["spec"]>>): Pod => ({
  metadata: { name: "p" },
  spec: { containers: [], ...spec },
});
const usage = (containers: Record<string, number>, emptyDirs: Record<string, number> = {}) => ({
  containers: new Map(Object.entries(containers)),
  emptyDirs: new Map(Object.entries(emptyDirs)),
});

describe("local-storage eviction, as the kubelet's eviction manager decides it", () => {
  test("the e2e suite's pod: 10 MiB written under a 5Mi limit is the pod over its containers' total", () => {
    const p = pod({ containers: [limited("evicted-pod", "5Mi")] });
    assert.equal(storageEviction(p, usage({ "evicted-pod": 4 * MiB })), undefined);
    assert.equal(
      storageEviction(p, usage({ "evicted-pod": 10 * MiB })),
      "Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. ",
    );
  });

  test("an emptyDir over its sizeLimit is named first; a memory-backed one is the kernel's to bound", () => {
    const p = pod({
      containers: [limited("app", "100Mi")],
      volumes: [
        { name: "scratch", emptyDir: { sizeLimit: "1Mi" } },
        { name: "ram", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
      ],
    });
    assert.equal(
      storageEviction(p, usage({ app: 200 * MiB }, { scratch: 2 * MiB })),
      'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
    );
    assert.equal(storageEviction(p, usage({ app: 0 }, { ram: 50 * MiB })), undefined);
  });

  test("one container over its own limit while the pod is under the total", () => {
    const p = pod({ containers: [limited("small", "1Mi"), limited("big", "100Mi")] });
    assert.equal(
      storageEviction(p, usage({ small: 2 * MiB, big: 0 })),
      'Container small exceeded its local ephemeral storage limit "1Mi". ',
    );
  });

  test("the pod's limit sums main containers and sidecars, or a larger regular init container's", () => {
    const p = pod({
      initContainers: [limited("proxy", "2Mi", "Always"), limited("setup", "50Mi")],
      containers: [limited("app", "5Mi"), limited("other")],
    });
    assert.equal(podStorageLimit(p), 52 * MiB);
    assert.equal(
      podStorageLimit(pod({ containers: [limited("app", "5Mi"), limited("sidecar", "3Mi")] })),
      8 * MiB,
    );
    assert.equal(podStorageLimit(pod({ containers: [limited("app")] })), undefined);
    assert.equal(hasStorageLimits(pod({ containers: [limited("app")] })), false);
    assert.equal(hasStorageLimits(p), true);
  });

  test("a byte count printed as Go's Quantity prints it", () => {
    assert.equal(formatBytes(5 * MiB, true), "5Mi");
    assert.equal(formatBytes(1536, true), "1536");
    assert.equal(formatBytes(3 * 2 ** 30, true), "3Gi");
    assert.equal(formatBytes(5_000_000, false), "5M");
    assert.equal(formatBytes(0, true), "0");
  });
});

describe("what the agent measures", () => {
  test("a folder's files by the blocks they take, sub-folders included, links not followed", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-du-"));
    try {
      mkdirSync(join(dir, "sub"));
      writeFileSync(join(dir, "sub", "a"), Buffer.alloc(MiB, 1));
      writeFileSync(join(dir, "b"), Buffer.alloc(100 * 1024, 1));
      symlinkSync("/usr", join(dir, "usr"));
      const bytes = dirBytes(dir);
      assert.ok(bytes >= MiB + 100 * 1024 && bytes < MiB + 200 * 1024, `${bytes}`);
      assert.equal(dirBytes(join(dir, "missing")), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a process that is gone has no writable layer", () => {
    assert.equal(writableLayerBytes(undefined), 0);
    assert.equal(writableLayerBytes(2 ** 22 + 1), 0);
  });
});

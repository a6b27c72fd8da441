// The loader against the real kernel: all eight programs through the verifier and attached to a cgroup of the
// test's own; a second start replaces the programs inside the pinned links; a narrower or resized start drops
// what no longer fits; the verifier's refusal reaches the error; removal leaves the cgroup bare. Then the pure
// parts (mountinfo) without the kernel.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { clangArgs } from "../../bpf/build.mjs";
import { DEFAULT_OUT_DIR } from "../../bpf/gen-layout.mjs";
import { cgroup2Root, mountOf, parseMountInfo } from "../../src/apply/bpf-fs.js";
import {
  BPFLoadError,
  linksDir,
  loadSockPrograms,
  removeSockPrograms,
  SOCK_PROGRAMS,
} from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { encodeStruct } from "../../src/ebpf/codec.js";
import { backendKey } from "../../src/ebpf/layout.js";
import { attachedPrograms, ebpfTestsUnavailable, TestCgroup, testPinRoot } from "./ebpf-fixture.js";

const skip = await ebpfTestsUnavailable();
if (skip) console.log(`# skipping eBPF loader kernel tests: ${skip}`);

const ALL = [...SOCK_PROGRAMS.IPv4, ...SOCK_PROGRAMS.IPv6].map((p) => p.name).sort();
const V4 = SOCK_PROGRAMS.IPv4.map((p) => p.name).sort();
const names = (list: { name: string }[]) => list.map((p) => p.name).sort();

describe("the eBPF loader in the kernel", { skip: skip ?? false }, () => {
  let cgroup: TestCgroup | undefined;
  const pinRoot = testPinRoot("loader");
  const sizes = { services: 1024, backends: 1024 };

  before(() => {
    cgroup = new TestCgroup("loader");
  });
  after(async () => {
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
  });

  test("every program passes the verifier and is attached to the cgroup, links and maps pinned", async () => {
    const cgroupPath = (cgroup as TestCgroup).path;
    const r = await loadSockPrograms({ cgroupPath, pinRoot, maxEntries: sizes });
    console.log(`# load + attach of 8 programs (fresh): ${r.elapsedMs.toFixed(1)} ms`);
    assert.deepEqual(Object.keys(r.programs).sort(), ALL);
    assert.ok(Object.values(r.programs).every((how) => how === "attached"));
    const attached = await attachedPrograms(cgroupPath);
    assert.deepEqual(names(attached), ALL);
    // bpftool's names for the hooks: each program sits at its own.
    const hooks = Object.fromEntries(attached.map((p) => [p.name, p.attachType]));
    assert.equal(hooks.connect4, "cgroup_inet4_connect");
    assert.equal(hooks.sendmsg6, "cgroup_udp6_sendmsg");
    assert.equal(hooks.recvmsg4, "cgroup_udp4_recvmsg");
    assert.equal(hooks.getpeername6, "cgroup_inet6_getpeername");
    assert.deepEqual(readdirSync(linksDir(pinRoot)).sort(), ALL);
    for (const map of ["lb4_services", "lb4_backends", "lb6_reverse_sk", "lb6_affinity"]) {
      assert.ok(existsSync(join(pinRoot, map)), `${map} is pinned`);
    }
  });

  test("a second start replaces the programs inside the pinned links, and keeps the maps' entries", async () => {
    const cgroupPath = (cgroup as TestCgroup).path;
    const before = await attachedPrograms(cgroupPath);
    const store = await KernelBPFMapStore.open(pinRoot);
    const backend = [encodeStruct(backendKey, "IPv4", { backendId: 5 }), Buffer.alloc(8, 1)] as const;
    await store.write("IPv4", [{ map: "backends", op: "update", entries: [backend] }]);
    store.close();
    const r = await loadSockPrograms({ cgroupPath, pinRoot, maxEntries: sizes });
    console.log(`# load + replace of 8 programs (pinned links kept): ${r.elapsedMs.toFixed(1)} ms`);
    assert.ok(Object.values(r.programs).every((how) => how === "replaced"));
    assert.deepEqual(r.recreatedMaps, []);
    const now = await attachedPrograms(cgroupPath);
    assert.deepEqual(names(now), ALL);
    const oldIds = new Set(before.map((p) => p.id));
    assert.ok(
      now.every((p) => !oldIds.has(p.id)),
      "every program is a new one",
    );
  });

  test("a start with IPv4 only and a bigger services map detaches IPv6 and starts that map anew", async () => {
    const cgroupPath = (cgroup as TestCgroup).path;
    const r = await loadSockPrograms({
      cgroupPath,
      pinRoot,
      families: ["IPv4"],
      maxEntries: { ...sizes, services: 2048 },
    });
    assert.deepEqual(Object.keys(r.programs).sort(), V4);
    assert.deepEqual([...r.recreatedMaps].sort(), [
      "lb4_services",
      "lb6_affinity",
      "lb6_backends",
      "lb6_masquerade",
      "lb6_reverse_nat",
      "lb6_reverse_sk",
      "lb6_services",
      "lb6_src_range",
      "lb6_stale_flows",
    ]);
    assert.deepEqual(names(await attachedPrograms(cgroupPath)), V4);
    assert.deepEqual(readdirSync(linksDir(pinRoot)).sort(), V4);
    assert.ok(!existsSync(join(pinRoot, "lb6_services")));
  });

  test("a program the verifier refuses fails the load with the verifier's log, and attaches nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-ebpf-bad-"));
    try {
      const object = compileRefusedObject(dir);
      const otherPins = testPinRoot("refused");
      const other = new TestCgroup("refused");
      try {
        await assert.rejects(
          loadSockPrograms({
            objectPath: object,
            cgroupPath: other.path,
            pinRoot: otherPins,
            maxEntries: sizes,
          }),
          (e: Error) => {
            assert.ok(e instanceof BPFLoadError);
            assert.match(e.message, /loading .* failed/);
            assert.match(e.message, /verifier log/);
            assert.match(e.message, /invalid bpf_context access/);
            return true;
          },
        );
        assert.deepEqual(await attachedPrograms(other.path), []);
      } finally {
        await removeSockPrograms(otherPins);
        await other.remove();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("removal detaches every program at once and unpins everything; a second removal has nothing to do", async () => {
    const cgroupPath = (cgroup as TestCgroup).path;
    assert.notDeepEqual(await attachedPrograms(cgroupPath), []);
    const removed = await removeSockPrograms(pinRoot);
    assert.deepEqual([...removed.links].sort(), V4);
    assert.ok(removed.maps.includes("lb4_services"));
    assert.deepEqual(await attachedPrograms(cgroupPath), []);
    assert.ok(!existsSync(pinRoot));
    assert.deepEqual(await removeSockPrograms(pinRoot), { links: [], maps: [] });
  });
});

/**
 * The real object's maps and program names around a connect4 that reads past the end of its context: the
 * verifier refuses it. Compiled as bpf/build.mjs compiles, with the headers the build generated.
 */
function compileRefusedObject(dir: string): string {
  const programs = ALL.map((name) => {
    const hook = `cgroup/${name}`;
    const body = name === "connect4" ? "return *(volatile __u32 *)((char *)ctx + 4096);" : "return 1;";
    return `SEC("${hook}") int ${name}(struct bpf_sock_addr *ctx) { ${body} }`;
  });
  const source = join(dir, "refused.c");
  writeFileSync(
    source,
    [
      "#include <linux/bpf.h>",
      "#include <bpf/bpf_helpers.h>",
      '#include "switchyard_maps.h"',
      ...programs,
      'char LICENSE[] SEC("license") = "Apache-2.0";',
      "",
    ].join("\n"),
  );
  const object = join(dir, "refused.o");
  const r = spawnSync("clang", clangArgs(source, DEFAULT_OUT_DIR, object), { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return object;
}

describe("mountinfo", () => {
  const text = [
    "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw",
    "30 22 0:26 / /sys/fs/cgroup ro shared:9 - tmpfs tmpfs ro,mode=755",
    "31 30 0:27 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw,nsdelegate",
    "40 22 0:35 / /sys/fs/bpf rw master:1 shared:20 - bpf bpf rw,mode=700",
    "41 1 0:36 / /mnt/with\\040space rw - tmpfs none rw",
    "1 0 8:1 / / rw - ext4 /dev/root rw",
  ].join("\n");
  const mounts = parseMountInfo(text);

  test("reads each mount point and type, optional fields and escapes included", () => {
    assert.deepEqual(mounts[2], { mountPoint: "/sys/fs/cgroup/unified", fsType: "cgroup2" });
    assert.deepEqual(mounts[3], { mountPoint: "/sys/fs/bpf", fsType: "bpf" });
    assert.deepEqual(mounts[4], { mountPoint: "/mnt/with space", fsType: "tmpfs" });
  });

  test("the cgroup2 root, and the mount a path lies on (the longest mount point above it)", () => {
    assert.equal(cgroup2Root(mounts), "/sys/fs/cgroup/unified");
    assert.equal(cgroup2Root(parseMountInfo("1 0 8:1 / / rw - ext4 /dev/root rw")), undefined);
    assert.equal(mountOf("/sys/fs/bpf/switchyard", mounts)?.fsType, "bpf");
    assert.equal(mountOf("/sys/fs/bpfx", mounts)?.fsType, "sysfs");
    assert.equal(mountOf("/var/lib", mounts)?.fsType, "ext4");
  });
});

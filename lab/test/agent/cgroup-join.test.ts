import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cgroupJoinFiles, joinCgroupsArgv } from "../../src/agent/cgroup-join.js";

// This machine's layout: cgroup v1 hierarchies beside a cgroup2 mount (hybrid), one of them mounted twice.
const mountinfo = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  "90 88 0:32 /lab /mnt/lab-memory rw,relatime - cgroup cgroup rw,memory",
].join("\n");

const agent = [
  "9:name=systemd:/",
  "8:pids:/",
  "4:memory:/sy/node-1/system",
  "1:cpu:/sy/node-1/system",
  "0::/sy/node-1/system",
].join("\n");

describe("an exec joins its container's cgroups", () => {
  test("the hierarchies where the container is elsewhere than the agent, at their mount points", () => {
    const container = [
      "9:name=systemd:/",
      "8:pids:/",
      "4:memory:/sy/node-1/podu1/web",
      "1:cpu:/sy/node-1/podu1/web",
      "0::/sy/node-1/podu1/web",
    ].join("\n");
    assert.deepEqual(cgroupJoinFiles(container, agent, mountinfo), [
      "/sys/fs/cgroup/memory/sy/node-1/podu1/web/cgroup.procs",
      "/sys/fs/cgroup/cpu/sy/node-1/podu1/web/cgroup.procs",
      "/sys/fs/cgroup/unified/sy/node-1/podu1/web/cgroup.procs",
    ]);
  });

  test("a container in the agent's cgroups, or a hierarchy not mounted, gives nothing to join", () => {
    assert.deepEqual(cgroupJoinFiles(agent, agent, mountinfo), []);
    assert.deepEqual(cgroupJoinFiles("3:cpuset:/elsewhere", agent, mountinfo), []);
  });

  test("the shell joins each file it can, then execs the command with its exit code", (t) => {
    if (process.getuid?.() !== 0) return t.skip("needs root to make a cgroup");
    const root = "/sys/fs/cgroup/unified";
    const dir = mkdtempSync(join(root, "sy-join-"));
    const procs = join(dir, "cgroup.procs");
    try {
      const argv = joinCgroupsArgv(
        [procs, join(tmpdir(), "no-such-cgroup", "cgroup.procs")],
        ["sh", "-c", "cat /proc/self/cgroup; exit 0"],
      );
      const out = execFileSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8" });
      assert.match(out, new RegExp(`^0::${dir.slice(root.length)}$`, "m"));
      assert.equal(readFileSync(procs, "utf8"), "");
      const failing = joinCgroupsArgv([procs], ["sh", "-c", "exit 5"]);
      assert.equal(spawnSync(failing[0] ?? "", failing.slice(1)).status, 5);
      assert.deepEqual(joinCgroupsArgv([], ["true"]), ["true"]);
    } finally {
      rmdirSync(dir);
    }
  });
});

// Whether a recorded pid is still the component we started, through the windows of a process's exit: a restart
// that took an exiting kube-apiserver for gone (or for running) broke CI's apiserver suite.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isOurs, judgeProcess, startDetached, stopProcess } from "../src/controlplane/processes.js";

const args = ["--etcd-servers=https://127.0.0.1:2379", "--secure-port=6443"];
const cmdline = ["/opt/kube-apiserver", ...args].join("\0");
// pid (comm) state ppid pgrp session tty tpgid flags ...; a name may hold spaces and parentheses.
const stat = (state: string, flags = 0x400000) =>
  `4242 (kube (api) server) ${state} 1 4242 4242 0 -1 ${flags} 0 0`;

test("a running process with our command line is ours; another command line on the same pid is not", () => {
  assert.equal(judgeProcess({ stat: stat("S"), cmdline, threads: 12 }, args), true);
  const reused = ["/usr/bin/sleep", "60"].join("\0");
  assert.equal(judgeProcess({ stat: stat("S"), cmdline: reused, threads: 1 }, args), false);
});

test("an exiting process whose memory is gone (empty command line) still counts until it is a zombie", () => {
  assert.equal(judgeProcess({ stat: stat("R"), cmdline: "", threads: 9 }, args), true);
  assert.equal(judgeProcess({ stat: stat("D"), cmdline: "", threads: 1 }, args), true);
});

test("a zombie counts while other threads are still tearing down, and is gone once only its leader is left", () => {
  assert.equal(judgeProcess({ stat: stat("Z"), cmdline: "", threads: 5 }, args), true);
  assert.equal(judgeProcess({ stat: stat("Z"), cmdline: "", threads: 1 }, args), false);
});

test("a kernel thread that took the pid is not ours", () => {
  assert.equal(judgeProcess({ stat: stat("I", 0x208040), cmdline: "", threads: 1 }, args), false);
});

test("a real child: ours while it runs, not under other arguments, and not once killed and reaped", async () => {
  const record = startDetached("sleeper", "sleep", ["30"], "/dev/null", false);
  try {
    assert.equal(isOurs(record), true);
    assert.equal(isOurs({ ...record, args: ["31"] }), false);
  } finally {
    assert.equal(await stopProcess(record, 0), "killed");
  }
  assert.equal(isOurs(record), false);
});

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import { eventually } from "@switchyard/kube/testing";
import { Container, type RestartPolicy } from "../../src/agent/container.js";
import { ContainerLog } from "../../src/agent/container-log.js";
import { processStartTicks } from "../../src/agent/container-shim.js";
import { readContainerRecord, writeContainerRecord } from "../../src/agent/runtime-record.js";
import { containerFiles } from "./fixtures/container-files.js";

const run = promisify(execFile);
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A pod folder, and a script that prints `one`, waits for the file `go`, prints `two` and exits with `code`. */
function pod(code: number) {
  const dir = mkdtempSync(join(tmpdir(), "sy-adopt-"));
  dirs.push(dir);
  const go = join(dir, "go");
  const argv = ["sh", "-c", `echo one; while [ ! -e ${go} ]; do sleep 0.05; done; echo two; exit ${code}`];
  return { dir, go, argv };
}

/** The container as this process's agent makes it, on the folder's files. */
function container(dir: string, argv: string[], policy: RestartPolicy) {
  const files = containerFiles(dir);
  const log = new ContainerLog(files.output, files.merged, files.logs);
  const c = new Container({
    name: "c",
    argv,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    output: files.output,
    log,
    restartPolicy: policy,
    runtime: { exitFile: files.exitFile, save: (r) => writeContainerRecord(dir, "c", r) },
    onChange: () => {},
  });
  return { c, log };
}

/** Runs the first agent (fixtures/first-agent.ts) in its own process, which exits with the container running. */
async function firstAgent(dir: string, argv: string[]): Promise<void> {
  await run(process.execPath, [
    "--import",
    "tsx",
    join(import.meta.dirname, "fixtures", "first-agent.ts"),
    dir,
    JSON.stringify(argv),
  ]);
}

describe("containers under a shim, adopted by the next agent", () => {
  test("the container's own process is the shim's child, and the shim writes its exit code", async () => {
    const p = pod(3);
    const { c } = container(p.dir, p.argv, "Never");
    await c.start();
    const record = readContainerRecord(p.dir, "c");
    assert.ok(record?.process, "the running instance is recorded");
    assert.equal(c.pid, record.process.pid);
    const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${c.pid}/status`, "utf8"))?.[1];
    assert.equal(Number(ppid), record.process.shimPid);
    assert.notEqual(record.process.shimPid, c.pid);
    writeFileSync(p.go, "");
    await c.settled;
    assert.equal(c.state.terminated?.exitCode, 3);
    assert.equal(readFileSync(containerFiles(p.dir).exitFile(0), "utf8").trim(), "3");
  });

  test("an agent that exits leaves the process running; the next adopts it and sees how it ends", async () => {
    const p = pod(7);
    await firstAgent(p.dir, p.argv);
    const record = readContainerRecord(p.dir, "c");
    assert.ok(record?.process && record.state.running, "the first agent recorded a running instance");
    assert.equal(processStartTicks(record.process.pid), record.process.pidStart, "it outlived its agent");
    const { c, log } = container(p.dir, p.argv, "Never");
    c.adopt(record);
    assert.equal(c.pid, record.process.pid);
    assert.ok(c.running);
    writeFileSync(p.go, "");
    await c.settled;
    assert.deepEqual(
      { code: c.state.terminated?.exitCode, reason: c.state.terminated?.reason },
      { code: 7, reason: "Error" },
    );
    assert.equal(c.state.terminated?.startedAt, record.state.running.startedAt);
    // What the process printed before and after the change of agent, each line once.
    assert.deepEqual(
      log.lines(0).map((l) => l.text),
      ["one\n", "two\n"],
    );
  });

  test("an exit while no agent ran is found in the exit file, and the restart policy takes it from there", async () => {
    const p = pod(4);
    await firstAgent(p.dir, p.argv);
    const record = readContainerRecord(p.dir, "c");
    assert.ok(record?.process);
    writeFileSync(p.go, "");
    const exitFile = containerFiles(p.dir).exitFile(0);
    await eventually("the shim to write the exit", () => existsSync(exitFile), { timeoutMs: 10_000 });
    rmSync(p.go);
    const { c } = container(p.dir, p.argv, "Always");
    c.adopt(record);
    await eventually(
      "a new instance after the exit",
      () => c.restartCount === 1 && c.running && c.pid !== undefined,
      { timeoutMs: 10_000 },
    );
    assert.equal(c.lastState.terminated?.exitCode, 4);
    assert.notEqual(c.pid, record.process.pid);
    await c.stop(1000);
  });

  test("a stop of an adopted instance signals its process and waits for the shim's word", async () => {
    const p = pod(0);
    await firstAgent(p.dir, p.argv);
    const record = readContainerRecord(p.dir, "c");
    assert.ok(record?.process);
    const { c } = container(p.dir, p.argv, "Always");
    c.adopt(record);
    await c.stop(5000);
    // sh dies of the SIGTERM: 128 + 15, as a runtime reports it.
    assert.equal(c.state.terminated?.exitCode, 143);
    assert.equal(processStartTicks(record.process.pid), undefined);
  });
});

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { after, before, describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { PodSource, RunningPod } from "../../src/agent/kubelet-api/container-logs.js";
import { execInContainer } from "../../src/agent/kubelet-api/exec-in-container.js";
import type { TerminalSize } from "../../src/agent/kubelet-api/resize.js";
import { resolveStreamingTarget } from "../../src/agent/kubelet-api/streaming-target.js";

const running = (pid: number | undefined): RunningPod => ({
  object: { metadata: { name: "web", namespace: "ns", uid: "u-1" } } as Pod,
  podNetns: "pod-netns",
  container: (name) =>
    name === "app"
      ? { view: { state: {}, lastState: {}, current: undefined }, log: undefined as never, pid }
      : undefined,
});
const pods = (pod: RunningPod): PodSource => ({
  pods: () => [pod.object],
  pod: (ns, name) => (ns === "ns" && name === "web" ? pod : undefined),
});

describe("streaming request paths (the kubelet's lookups before the upgrade)", () => {
  const source = pods(running(42));
  test("exec and attach with and without the uid; portForward by pod", () => {
    assert.deepEqual(resolveStreamingTarget("/exec/ns/web/app", source), {
      endpoint: "exec",
      pod: source.pod("ns", "web"),
      container: "app",
      pid: 42,
      log: undefined,
      input: undefined,
    });
    assert.equal((resolveStreamingTarget("/attach/ns/web/u-1/app", source) as { pid: number }).pid, 42);
    assert.equal(
      (resolveStreamingTarget("/portForward/ns/web/u-1", source) as { netns: string }).netns,
      "pod-netns",
    );
  });
  test("unknown pod, uid, or container: 404 with the kubelet's words", () => {
    const refusal = (path: string) => resolveStreamingTarget(path, source);
    assert.deepEqual(refusal("/exec/ns/nope/app"), { status: 404, message: "pod does not exist" });
    assert.deepEqual(refusal("/exec/ns/web/u-2/app"), { status: 404, message: "pod not found" });
    assert.deepEqual(refusal("/exec/ns/web/db"), { status: 404, message: `container not found ("db")` });
    assert.deepEqual(refusal("/exec/ns/web"), { status: 404, message: "404 page not found" });
    const stopped = pods(running(undefined));
    assert.deepEqual(resolveStreamingTarget("/exec/ns/web/app", stopped), {
      status: 404,
      message: `container not found ("app")`,
    });
  });
});

const skip = process.getuid?.() !== 0 ? "nsenter needs root" : undefined;

describe("exec in a container's namespaces (nsenter)", { skip }, () => {
  let target: ChildProcess;
  before(() => {
    // A stand-in container: a process in its own UTS namespace with a hostname of its own.
    target = spawn("unshare", ["--uts", "--", "sh", "-c", "hostname exec-test && exec sleep 60"], {
      env: { PATH: "/usr/bin:/bin", MARK: "from-the-container" },
    });
  });
  after(() => target.kill());

  const run = async (
    command: string[],
    o: { stdin?: string; tty?: boolean; size?: TerminalSize; lateSize?: TerminalSize } = {},
  ) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = "";
    let err = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const stdin = o.stdin === undefined ? undefined : PassThrough.from([o.stdin]);
    const code = await execInContainer(target.pid ?? 0)(command, {
      stdin,
      stdout,
      stderr: o.tty ? undefined : stderr,
      tty: o.tty ?? false,
      onResize: (listener) => {
        if (o.size) listener(o.size);
        const late = o.lateSize;
        if (late) setTimeout(() => listener(late), 50);
      },
      signal: new AbortController().signal,
    });
    return { code, out, err };
  };

  test("output, exit code, environment and hostname are the container's", async () => {
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await run(["sh", "-c", 'echo out; echo err >&2; echo "$MARK $(hostname)"; exit 3']), {
      code: 3,
      out: "out\nfrom-the-container exec-test\n",
      err: "err\n",
    });
    assert.deepEqual(await run(["cat"], { stdin: "piped in\n" }), { code: 0, out: "piped in\n", err: "" });
  });

  test("a command that does not exist: 127 and a message on stderr", async () => {
    const result = await run(["no-such-command"]);
    assert.equal(result.code, 127);
    assert.match(result.err, /no-such-command: No such file or directory/);
  });

  test("with a tty: a terminal of the client's size", async () => {
    const result = await run(["sh", "-c", "tty; stty size; exit 5"], {
      tty: true,
      size: { width: 97, height: 31 },
    });
    assert.equal(result.code, 5);
    assert.match(result.out, /^\/dev\/pts\/\d+\r\n31 97\r\n$/);
  });

  test("with a tty: a resize after the start reaches the terminal", async () => {
    const result = await run(["sh", "-c", "sleep 0.4; stty size"], {
      tty: true,
      size: { width: 80, height: 24 },
      lateSize: { width: 120, height: 40 },
    });
    assert.deepEqual(result, { code: 0, out: "40 120\r\n", err: "" });
  });
});

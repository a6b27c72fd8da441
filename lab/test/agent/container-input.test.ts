import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { sleep } from "@switchyard/kube/testing";
import { Container } from "../../src/agent/container.js";
import { type InputSpec, onPty } from "../../src/agent/container-input.js";
import { ContainerLog } from "../../src/agent/container-log.js";
import { attachToContainer } from "../../src/agent/kubelet-api/attach-to-container.js";
import type { TerminalSize } from "../../src/agent/kubelet-api/resize.js";
import type { StreamIO } from "../../src/agent/kubelet-api/streams.js";

/** A container of `argv` with a log in a fresh folder, started. */
function started(argv: string[], input: InputSpec): { c: Container; log: ContainerLog } {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-input-"));
  const output = { stdout: join(dir, "c.stdout"), stderr: join(dir, "c.stderr") };
  const log = new ContainerLog(output, join(dir, "c.log"), join(dir, "logs"));
  const c = new Container({
    name: "c",
    argv,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    output,
    log,
    restartPolicy: "Never",
    input,
    onChange: () => {},
  });
  c.start();
  return { c, log };
}

/** An attach client: its stdin to write to, what it was sent, and its terminal size (tty only). */
function client(tty: boolean, size?: TerminalSize) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = "";
  stdout.on("data", (d: Buffer) => (text += d.toString()));
  const io: StreamIO = {
    stdin,
    stdout,
    stderr: undefined,
    tty,
    onResize: (listener) => size && listener(size),
    signal: new AbortController().signal,
  };
  return { io, stdin, output: () => text };
}

describe("a container's stdin and tty, through attach", () => {
  test("stdin: the client's input reaches the process; stdinOnce closes it when the client's input ends", async () => {
    const { c, log } = started(["sh", "-c", "echo before; cat"], {
      stdin: true,
      stdinOnce: true,
      tty: false,
    });
    await sleep(300);
    const a = client(false);
    const attached = attachToContainer(log, c.input)(a.io);
    a.stdin.end("through stdin\n");
    // cat sees end of file and exits, which ends the attach; the first attach also got the output before it.
    await attached;
    assert.equal(a.output(), "before\nthrough stdin\n");
    assert.equal(c.state.terminated?.exitCode, 0);
  });

  test("tty: on a terminal of the client's size, input echoed, output recorded to the log", async () => {
    const { c, log } = started(onPty(["sh", "-c", "read x; stty size; echo got $x"]), {
      stdin: true,
      stdinOnce: true,
      tty: true,
    });
    const a = client(true, { width: 97, height: 31 });
    const attached = attachToContainer(log, c.input)(a.io);
    await sleep(300);
    a.stdin.write("hi\r");
    await attached;
    assert.equal(a.output(), "hi\r\n31 97\r\ngot hi\r\n");
    assert.deepEqual(
      log.lines(0).map((l) => l.text),
      ["hi\r\n", "31 97\r\n", "got hi\r\n"],
    );
  });

  test("a container without spec stdin drops what the client sends", async () => {
    const { c, log } = started(["sh", "-c", "sleep 0.5; echo done"], {
      stdin: false,
      stdinOnce: false,
      tty: false,
    });
    assert.equal(c.input, undefined);
    const a = client(false);
    const attached = attachToContainer(log, c.input)(a.io);
    a.stdin.end("ignored\n");
    await attached;
    assert.equal(a.output(), "done\n");
  });
});

import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { ContainerLog } from "../../src/agent/container-log.js";
import { formatCriLine, formatLogTime, parseCriLog } from "../../src/agent/cri-log.js";
import { logInstance } from "../../src/agent/kubelet-api/log-instance.js";
import { isQueryError, type LogQuery, parseLogQuery } from "../../src/agent/kubelet-api/log-query.js";
import { LogSelection } from "../../src/agent/kubelet-api/log-selection.js";

const t0 = Date.parse("2026-12-01T10:00:00.000Z");
const lines = [1, 2, 3, 4].map((n) => ({
  time: t0 + n * 1000,
  stream: "stdout" as const,
  text: `line ${n}\n`,
}));
const parse = (query: string, now = t0) => parseLogQuery(new URLSearchParams(query), now);

describe("container log query (the kubelet's PodLogOptions decoding)", () => {
  test("defaults, flags and numbers", () => {
    assert.deepEqual(parse(""), { follow: false, previous: false, timestamps: false });
    assert.deepEqual(parse("follow=true&previous=1&timestamps=True&tailLines=2&limitBytes=10"), {
      follow: true,
      previous: true,
      timestamps: true,
      tailLines: 2,
      limitBytes: 10,
    });
  });

  test("sinceSeconds counts back from now; sinceTime is RFC3339", () => {
    assert.deepEqual(parse("sinceSeconds=5", t0 + 60_000), {
      follow: false,
      previous: false,
      timestamps: false,
      sinceMs: t0 + 55_000,
    });
    const q = parse("sinceTime=2026-12-01T10:00:02Z") as LogQuery;
    assert.equal(q.sinceMs, t0 + 2000);
  });

  test("the legacy tail parameter: a number, or all", () => {
    assert.equal((parse("tail=3") as LogQuery).tailLines, 3);
    assert.equal((parse("tail=all&tailLines=3") as LogQuery).tailLines, undefined);
  });

  test("values that do not decode are 400, out-of-range ones 422, with the kubelet's bodies", () => {
    for (const bad of ["follow=yes", "tailLines=two", "sinceTime=yesterday", "limitBytes=1.5"]) {
      assert.deepEqual(parse(bad), { status: 400, message: `{"message": "Unable to decode query."}` }, bad);
    }
    for (const bad of [
      "tailLines=-1",
      "limitBytes=0",
      "sinceSeconds=0",
      "sinceSeconds=5&sinceTime=2026-12-01T10:00:00Z",
    ]) {
      assert.deepEqual(parse(bad), { status: 422, message: `{"message": "Invalid request."}` }, bad);
    }
    assert.deepEqual(parse("stream=Stderr"), {
      status: 400,
      message: `unable to return the given log stream: "Stderr". Please enable PodLogsQuerySplitStreams feature gate in kubelet`,
    });
    assert.deepEqual(parse("stream=All"), { follow: false, previous: false, timestamps: false });
  });
});

describe("log selection (tail, since, timestamps, limitBytes)", () => {
  const select = (q: Partial<LogQuery>) => new LogSelection({ timestamps: false, ...q }).initial(lines);

  test("everything, or the last tailLines", () => {
    assert.equal(select({}), "line 1\nline 2\nline 3\nline 4\n");
    assert.equal(select({ tailLines: 2 }), "line 3\nline 4\n");
    assert.equal(select({ tailLines: 0 }), "");
    assert.equal(select({ tailLines: 10 }), "line 1\nline 2\nline 3\nline 4\n");
  });

  test("tail picks the start first, then since skips older lines (the kubelet's order)", () => {
    assert.equal(select({ sinceMs: t0 + 3000 }), "line 3\nline 4\n");
    assert.equal(select({ tailLines: 3, sinceMs: t0 + 4000 }), "line 4\n");
  });

  test("timestamps: RFC3339 with nine fractional digits and a space", () => {
    assert.equal(select({ tailLines: 1, timestamps: true }), "2026-12-01T10:00:04.000000000Z line 4\n");
    assert.equal(formatLogTime(Date.parse("2026-12-01T10:00:00.123Z")), "2026-12-01T10:00:00.123000000Z");
  });

  test("limitBytes cuts the output, the last line too, and stays spent for lines that follow", () => {
    const s = new LogSelection({ timestamps: false, limitBytes: 10 });
    assert.equal(s.initial(lines), "line 1\nlin");
    assert.ok(s.exhausted);
    assert.equal(s.more(lines), "");
    const cut = new LogSelection({ timestamps: false, limitBytes: 2 });
    assert.equal(
      cut.initial([{ time: t0, stream: "stdout", text: "é€\n" }]),
      "é",
      "a character is never sent half",
    );
  });

  test("lines arriving while following pass the same since filter", () => {
    const s = new LogSelection({ timestamps: false, sinceMs: t0 + 2500, tailLines: 1 });
    assert.equal(s.initial(lines.slice(0, 2)), "");
    assert.equal(s.more(lines.slice(2)), "line 3\nline 4\n");
  });
});

describe("which instance a log request reads (validateContainerLogStatus)", () => {
  const running = { state: { running: {} }, lastState: {} };
  const restarted = { state: { running: {} }, lastState: { terminated: { exitCode: 1 } } };
  const backoff = {
    state: { waiting: { reason: "CrashLoopBackOff" } },
    lastState: { terminated: { exitCode: 1 } },
  };

  test("the current instance, and previous after a restart", () => {
    assert.deepEqual(logInstance({ ...running, current: { instance: 0, running: true } }, false, "p", "c"), {
      instance: 0,
    });
    assert.deepEqual(logInstance({ ...restarted, current: { instance: 2, running: true } }, true, "p", "c"), {
      instance: 1,
    });
  });

  test("while waiting for its restart, both read the instance that just ended", () => {
    const view = { ...backoff, current: { instance: 1, running: false } };
    assert.deepEqual(logInstance(view, false, "p", "c"), { instance: 1 });
    assert.deepEqual(logInstance(view, true, "p", "c"), { instance: 1 });
  });

  test("the kubelet's words when there is nothing to read", () => {
    const current = { instance: 0, running: true };
    assert.deepEqual(logInstance({ ...running, current }, true, "p", "c"), {
      error: `previous terminated container "c" in pod "p" not found`,
    });
    const pull = { state: { waiting: { reason: "ErrImagePull" } }, lastState: {}, current: undefined };
    assert.deepEqual(logInstance(pull, false, "p", "c"), {
      error: `container "c" in pod "p" is waiting to start: image can't be pulled`,
    });
    const creating = {
      state: { waiting: { reason: "ContainerCreating" } },
      lastState: {},
      current: undefined,
    };
    assert.deepEqual(logInstance(creating, false, "p", "c"), {
      error: `container "c" in pod "p" is waiting to start: ContainerCreating`,
    });
    assert.deepEqual(
      logInstance({ ...running, current: undefined }, false, "p", "c"),
      { instance: 0 },
      "pause",
    );
  });
});

describe("the CRI log format", () => {
  test("full and partial lines round-trip with their stream; foreign lines are skipped", () => {
    const partial = { time: t0, stream: "stderr" as const, text: "no end" };
    const written = formatCriLine(lines[0] ?? partial) + formatCriLine(partial);
    assert.equal(
      written,
      "2026-12-01T10:00:01.000000000Z stdout F line 1\n2026-12-01T10:00:00.000000000Z stderr P no end\n",
    );
    assert.deepEqual(parseCriLog(`${written}garbage\n`), [lines[0], partial]);
  });
});

describe("ContainerLog (a container's instance logs, read from its raw output)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sy-container-log-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("each instance gets its lines with their times and streams; the previous one is kept, older ones go", () => {
    const output = { stdout: join(dir, "c.stdout"), stderr: join(dir, "c.stderr") };
    const merged = join(dir, "c.log");
    writeFileSync(output.stdout, "from an agent before\n");
    writeFileSync(output.stderr, "");
    let now = t0;
    const log = new ContainerLog(output, merged, join(dir, "c"), () => now);
    const followed: string[] = [];
    const texts: string[] = [];
    log.begin(0);
    const stop = log.follow(
      (ls) => followed.push(...ls.map((l) => `${l.stream}:${l.text}`)),
      () => followed.push("<end>"),
    );
    const stopText = log.followText(
      (text, stream) => texts.push(`${stream}:${text}`),
      () => {},
    );
    appendFileSync(output.stdout, "a\nb");
    appendFileSync(output.stderr, "oops\n");
    now = t0 + 5;
    log.end();
    assert.deepEqual(log.lines(0), [
      { time: t0 + 5, stream: "stdout", text: "a\n" },
      { time: t0 + 5, stream: "stderr", text: "oops\n" },
      { time: t0 + 5, stream: "stdout", text: "b" },
    ]);
    assert.deepEqual(followed, ["stdout:a\n", "stderr:oops\n", "stdout:b", "<end>"]);
    assert.deepEqual(texts, ["stdout:a\nb", "stderr:oops\n"], "attach gets each output on its stream");
    stop();
    stopText();
    assert.deepEqual(log.current, { instance: 0, running: false });

    log.begin(1);
    appendFileSync(output.stdout, "c\n");
    log.begin(2);
    assert.deepEqual(log.lines(0), [], "only the previous instance is kept");
    assert.deepEqual(
      log.lines(1).map((l) => l.text),
      ["c\n"],
    );
    assert.deepEqual(log.current, { instance: 2, running: true });
    log.end();
    assert.equal(
      readFileSync(output.stdout, "utf8"),
      "from an agent before\na\nbc\n",
      "the process's own file",
    );
    assert.equal(
      readFileSync(merged, "utf8"),
      "a\nboops\nc\n",
      "both outputs as read, for switchyard-lab logs",
    );
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Logger, levelFromVerbosity } from "../../src/log/logger.js";

function capture(options: ConstructorParameters<typeof Logger>[0] = {}) {
  const lines: string[] = [];
  const logger = new Logger({
    now: () => Date.UTC(2024, 0, 1),
    ...options,
    out: { write: (l: string) => lines.push(l) },
  });
  return { logger, entries: () => lines.map((l) => JSON.parse(l)) };
}

describe("Logger", () => {
  test("writes one JSON object per line with level, message and fields", () => {
    const { logger, entries } = capture();
    logger.info("synced", { service: "shop/web", slices: 2 });
    assert.deepEqual(entries(), [
      { ts: "2024-01-01T00:00:00.000Z", level: "info", msg: "synced", service: "shop/web", slices: 2 },
    ]);
  });

  test("is quiet by default: debug is dropped, warn and error pass", () => {
    const { logger, entries } = capture();
    logger.debug("noise");
    logger.warn("careful");
    logger.error("broken", { error: new Error("boom") });
    assert.deepEqual(
      entries().map((e) => [e.level, e.msg, e.error]),
      [
        ["warn", "careful", undefined],
        ["error", "broken", "boom"],
      ],
    );
  });

  test("child loggers add fixed fields", () => {
    const { logger, entries } = capture();
    logger.child({ component: "proxier" }).child({ node: "n1" }).info("hi", { node: "n2" });
    assert.deepEqual(entries()[0], {
      ts: "2024-01-01T00:00:00.000Z",
      level: "info",
      msg: "hi",
      component: "proxier",
      node: "n2",
    });
  });

  test("writes each entry in the format given, fields merged and errors as their message", () => {
    const lines: string[] = [];
    const logger = new Logger({
      level: "warn",
      fields: { informer: "pods" },
      out: { write: (l: string) => lines.push(l) },
      format: (e) => `${e.level.toUpperCase()} ${e.fields.informer}: ${e.msg}: ${e.fields.error}`,
    });
    logger.child({ reflector: "pods" }).warn("list failed", { error: new Error("EOF") });
    logger.info("quiet");
    assert.deepEqual(lines, ["WARN pods: list failed: EOF"]);
  });

  test("-v verbosity enables debug and V(n) lines up to n", () => {
    const quiet = capture(levelFromVerbosity(0));
    quiet.logger.v(1).info("v1");
    quiet.logger.debug("d");
    assert.equal(quiet.entries().length, 0);

    const loud = capture(levelFromVerbosity(2));
    loud.logger.v(2).info("v2");
    loud.logger.v(3).info("v3");
    loud.logger.debug("d");
    assert.deepEqual(
      loud.entries().map((e) => e.msg),
      ["v2", "d"],
    );
  });
});

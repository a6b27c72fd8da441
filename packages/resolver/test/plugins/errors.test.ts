// The errors plugin: each error the chain returns logged as CoreDNS logs it, or counted by `consolidate` into
// one summary line per period; setup errors as CoreDNS words them (apps/cluster-dns/test/errors.diff.test.ts
// runs the same Corefiles through CoreDNS's binary).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metrics } from "../../src/metrics/metrics.js";
import type { Handler, QueryContext, ResponseWriter } from "../../src/plugin/handler.js";
import {
  type ConsolidatePattern,
  Consolidator,
  type LogLevel,
  parseConsolidate,
} from "../../src/plugins/errors/consolidate.js";
import { ErrorsHandler } from "../../src/plugins/errors/errors.js";
import { defaultRegistry } from "../../src/registry.js";
import { Resolver } from "../../src/resolver.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";
import { decodeOrFail, udpExchange } from "../helpers/clients.js";

/** Timers run by hand: `fire()` runs every pending one, as if its period had passed. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (fn: () => void) => {
      pending.set(++next, fn);
      return next;
    },
    clearTimeout: (h: unknown) => void pending.delete(h as number),
    fire() {
      const due = [...pending.values()];
      pending.clear();
      for (const fn of due) fn();
    },
    get pending() {
      return pending.size;
    },
  };
}

const failing = (message: string): Handler => ({
  name: "failing",
  serveDNS: async () => ({ rcode: 2, error: new Error(message) }),
});

function chain(patterns: ConsolidatePattern[]) {
  const lines: string[] = [];
  const timers = manualTimers();
  const log = (level: LogLevel, text: string) =>
    lines.push(`[${level.toUpperCase()}] plugin/errors: ${text}`);
  const consolidator = new Consolidator(patterns, log, timers);
  const ask = async (h: Handler, name = "example.org.") => {
    const handler = new ErrorsHandler(h, log, consolidator);
    const w = { transport: "udp", remote: { address: "127.0.0.1", port: 5353, family: "IPv4" }, write() {} };
    await handler.serveDNS(
      { zone: ".", server: "dns://:53" } as QueryContext,
      w as ResponseWriter,
      newQuery(name, 1),
    );
  };
  return { lines, timers, consolidator, ask };
}

const pattern = (args: string[]) => {
  const p = parseConsolidate(args);
  assert.ok("re" in p, JSON.stringify(p));
  return p;
};

describe("errors", () => {
  test("without consolidate every error is one line: rcode, name, type, message", async () => {
    const c = chain([]);
    await c.ask(failing("dial udp 10.0.0.1:53: connect: connection refused"));
    assert.deepEqual(c.lines, [
      "[ERROR] plugin/errors: 2 example.org. A: dial udp 10.0.0.1:53: connect: connection refused",
    ]);
  });

  test("consolidate: matching errors are counted, one summary per period at the pattern's level", async () => {
    const c = chain([pattern(["5m", ".* refused$", "warning"])]);
    for (let i = 0; i < 3; i++) await c.ask(failing("connection refused"));
    await c.ask(failing("i/o timeout"));
    assert.deepEqual(c.lines, ["[ERROR] plugin/errors: 2 example.org. A: i/o timeout"]);
    assert.equal(c.timers.pending, 1, "one timer, started by the first error of the burst");
    c.timers.fire();
    assert.deepEqual(c.lines.slice(1), [
      "[WARNING] plugin/errors: 3 errors like '.* refused$' occurred in last 5m0s",
    ]);
    // A quiet period writes nothing; the next burst starts its own period.
    c.timers.fire();
    await c.ask(failing("connection refused"));
    c.timers.fire();
    assert.deepEqual(c.lines.slice(2), [
      "[WARNING] plugin/errors: 1 errors like '.* refused$' occurred in last 5m0s",
    ]);
  });

  test("show_first: the first of a burst is logged in full at the pattern's level, the summary counts it too", async () => {
    const c = chain([pattern(["30s", "refused", "info", "show_first"])]);
    await c.ask(failing("connection refused"));
    c.timers.fire();
    assert.deepEqual(
      c.lines,
      ["[INFO] plugin/errors: 2 example.org. A: connection refused"],
      "a burst of one: no summary",
    );
    await c.ask(failing("connection refused"));
    await c.ask(failing("connection refused"));
    c.timers.fire();
    assert.deepEqual(c.lines.slice(1), [
      "[INFO] plugin/errors: 2 example.org. A: connection refused",
      "[INFO] plugin/errors: 2 errors like 'refused' occurred in last 30s",
    ]);
  });

  test("the first matching pattern takes the error; stopping flushes pending counts, later errors are logged", async () => {
    const c = chain([pattern(["1m", "refused"]), pattern(["1m", ".*"])]);
    await c.ask(failing("connection refused"));
    await c.ask(failing("connection refused"));
    await c.ask(failing("timeout"));
    c.consolidator.stop();
    assert.deepEqual(c.lines, [
      "[ERROR] plugin/errors: 2 errors like 'refused' occurred in last 1m0s",
      "[ERROR] plugin/errors: 1 errors like '.*' occurred in last 1m0s",
    ]);
    await c.ask(failing("connection refused"));
    assert.equal(c.lines.at(-1), "[ERROR] plugin/errors: 2 example.org. A: connection refused");
  });

  test("consolidate's arguments: CoreDNS's errors", () => {
    const cases: [string[], string | undefined][] = [
      [["5s"], undefined],
      [["5s", "a", "error", "show_first", "x"], undefined],
      [["5", "a"], 'time: missing unit in duration "5"'],
      [["soon", "a"], 'time: invalid duration "soon"'],
      [["5d", "a"], 'time: unknown unit "d" in duration "5d"'],
      [["5s", "())"], "error parsing regexp: unexpected ): `())`"],
      [["5s", "(?=x)"], "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
      [["5s", "x".repeat(10001)], "regex pattern too long: 10001 > 10000"],
      [["5s", "a", "error", "warning"], "multiple log levels specified in consolidate"],
      [["5s", "a", "show_first", "error"], "log level must come before show_first in consolidate"],
      [["5s", "a", "loud"], "unknown option in consolidate: loud"],
    ];
    for (const [args, error] of cases) assert.deepEqual(parseConsolidate(args), { error }, args.join(" "));
  });

  test("setup: stdout, stacktrace and consolidate accepted; anything else refused in CoreDNS's words", () => {
    const setup = (body: string) => () =>
      Resolver.fromCorefile(`.:0 {\n    ${body}\n}\n`, { file: "Corefile" });
    assert.doesNotThrow(
      setup('errors stdout {\n        stacktrace\n        consolidate 5m ".* i/o timeout$" warning\n    }'),
    );
    const refused: [string, string][] = [
      ["errors /var/log/x", "plugin/errors: Corefile:2 - Error during parsing: invalid log file: /var/log/x"],
      [
        "errors a b",
        "plugin/errors: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'b'",
      ],
      [
        "errors {\n        stacktrace\n        verbose\n    }",
        "plugin/errors: Corefile:4 - Syntax error: Unexpected token 'verbose', expecting 'Unknown field verbose'",
      ],
      [
        "errors {\n        consolidate 5s\n    }",
        "plugin/errors: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after '5s'",
      ],
      [
        "errors {\n        consolidate 5s a loud\n    }",
        "plugin/errors: Corefile:3 - Error during parsing: unknown option in consolidate: loud",
      ],
      [
        "errors {\n        stacktrace now\n    }",
        "plugin/errors: Corefile:3 - Syntax error: Unexpected token 'now', expecting 'Unknown field now'",
      ],
      ["errors\n    errors", "plugin/errors: this plugin can only be used once per Server Block"],
    ];
    for (const [body, message] of refused)
      assert.throws(setup(body), (err: Error) => err.message === message, `${body}`);
  });
});

describe("a chain that throws (CoreDNS's recovered panic)", () => {
  const thrower = new Map([
    [
      "whoami",
      () => ({
        plugin: () => ({
          name: "whoami",
          serveDNS: async () => {
            throw new Error("boom");
          },
        }),
      }),
    ],
  ]);

  async function ask(body: string) {
    const logs: string[] = [];
    const resolver = Resolver.fromCorefile(`.:0 {\n${body}\n    whoami\n    prometheus 127.0.0.1:0\n}\n`, {
      registry: new Map([...defaultRegistry(), ...thrower]),
      deps: { errorLog: (l) => logs.push(l), metrics: new Metrics() },
    });
    await resolver.start();
    try {
      const port = resolver.servers[0]?.address.port ?? 0;
      const bytes = await udpExchange(port, encodeMessage(newQuery("boom.example.", 1)), 2000);
      assert.ok(bytes, "a reply");
      const reply = decodeOrFail(bytes);
      const scrape = await resolver.config.deps.metrics?.registry.metrics();
      return { rcode: reply.rcode, logs, scrape: scrape ?? "" };
    } finally {
      await resolver.stop();
    }
  }

  test("SERVFAIL, one server log line, coredns_panics_total; the stack only under `errors { stacktrace }`", async () => {
    const plain = await ask("    errors");
    assert.equal(plain.rcode, 2);
    assert.equal(plain.logs.length, 1, plain.logs.join("\n"));
    assert.match(plain.logs[0] ?? "", /^\[ERROR\] Recovered from panic in server: "dns:\/\/:\d+" boom$/);
    assert.match(plain.scrape, /^coredns_panics_total 1$/m);
    assert.match(plain.scrape, /coredns_dns_responses_total\{server="dns:\/\/:\d+",zone="dropped",/);
    const traced = await ask("    errors {\n        stacktrace\n    }");
    assert.match(
      traced.logs[0] ?? "",
      /^\[ERROR\] Recovered from panic in server: "dns:\/\/:\d+" boom\nError: boom\n {4}at /,
    );
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Handler, QueryContext } from "../../src/plugin/handler.js";
import { CancelHandler } from "../../src/plugins/cancel/cancel.js";
import { Resolver } from "../../src/resolver.js";
import type { Timers } from "../../src/server/timers.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { askFast, askFull, chainOf, LOCAL_PEER } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

/** Timers that fire only when told to, recording what was asked. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  let id = 0;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(++id, { fn, ms });
      return id;
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  };
  return {
    timers,
    pending,
    fireAll: () => {
      for (const t of [...pending.values()]) t.fn();
    },
  };
}

const w = { transport: "udp" as const, remote: LOCAL_PEER, write: () => undefined };

describe("cancel", () => {
  test("the next plugin gets a signal that aborts after the timeout; the timer goes once the chain returns", async () => {
    const { timers, pending, fireAll } = manualTimers();
    let seen: AbortSignal | undefined;
    let release: () => void = () => {};
    const waiting: Handler = {
      name: "wait",
      serveDNS: async (ctx: QueryContext) => {
        seen = ctx.signal;
        await new Promise<void>((r) => (release = r));
        return { rcode: 2 };
      },
    };
    const done = new CancelHandler(waiting, 250, timers).serveDNS(
      { zone: ".", server: "" },
      w,
      newQuery("a.", 1),
    );
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      [...pending.values()].map((t) => t.ms),
      [250],
    );
    assert.equal(seen?.aborted, false);
    fireAll();
    assert.equal(seen?.aborted, true);
    assert.match(String(seen?.reason), /deadline of 250ms exceeded/);
    release();
    await done;
    assert.equal(pending.size, 0);
  });

  test("the server's own signal still aborts the query, and a quick answer clears the timer", async () => {
    const { timers, pending } = manualTimers();
    const outer = new AbortController();
    let seen: AbortSignal | undefined;
    const quick: Handler = {
      name: "quick",
      serveDNS: async (ctx, out, r) => {
        seen = ctx.signal;
        out.write(replyTo(r));
        return { rcode: 0 };
      },
    };
    await new CancelHandler(quick, 5001, timers).serveDNS(
      { zone: ".", server: "", signal: outer.signal },
      w,
      newQuery("a.", 1),
    );
    assert.equal(pending.size, 0);
    outer.abort();
    assert.equal(seen?.aborted, true);
  });

  test("defaults to 5001ms, and cache hits behind it still come from bytes", async () => {
    const { sites } = chainOf(" cancel\n cache", staticZone(["a.example.org. 60 IN A 192.0.2.1"]));
    const q = newQuery("a.example.org.", 1, 7);
    assert.equal((await askFull(sites, q))?.answer.length, 1);
    assert.equal(askFast(sites, q)?.answer.length, 1);
  });

  test("setup errors in upstream's wording", () => {
    const cases: [string, RegExp][] = [
      ["cancel 5", /plugin\/cancel: invalid duration: "5"$/],
      ["cancel -1s", /plugin\/cancel: invalid negative duration: "-1s"$/],
      ["cancel 0", /plugin\/cancel: invalid negative duration: "0"$/],
      [
        "cancel 1s 2s",
        /plugin\/cancel: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after '2s'$/,
      ],
      ["cancel 1s\n cancel soon", /invalid duration: "soon"$/],
    ];
    for (const [body, message] of cases)
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n ${body}\n whoami\n}\n`, { file: "Corefile" }),
        message,
        body,
      );
    assert.doesNotThrow(() => Resolver.fromCorefile(".:0 {\n cancel +1.5s\n whoami\n}\n"));
  });
});

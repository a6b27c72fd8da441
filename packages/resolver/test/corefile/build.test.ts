import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler } from "../../src/plugin/handler.js";
import { nextOrFailure } from "../../src/plugin/handler.js";
import type { Setup } from "../../src/plugin/setup.js";
import { onlyOnce } from "../../src/plugin/setup.js";
import { defaultRegistry } from "../../src/registry.js";
import { newQuery } from "../../src/wire/message.js";
import { STOCK_COREFILE } from "../helpers/stock-corefile.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

/** A plugin that records its name on the way down, for checking chain order. */
function tracer(name: string, trail: string[]): Setup<unknown> {
  return (ctx) => {
    onlyOnce(ctx, name);
    return {
      plugin: (next): Handler => ({
        name,
        serveDNS: (c, w, r) => {
          trail.push(name);
          return nextOrFailure(name, next, c, w, r);
        },
      }),
    };
  };
}

const ctx = { zone: ".", server: "dns://:53" };
const writer = {
  transport: "udp" as const,
  remote: { address: "127.0.0.1", port: 1, family: "IPv4" as const },
  write() {},
};

describe("buildConfig", () => {
  test("chain order follows plugin.cfg, not the Corefile", async () => {
    const trail: string[] = [];
    const registry = new Map(
      ["forward", "cache", "log", "errors"].map((n) => [n, tracer(n, trail)] as const),
    );
    const blocks = parseCorefile(".:53 {\n  forward\n  cache\n  errors\n  log\n}\n", { env: {} });
    const built = buildConfig(blocks, { registry, deps: {} });
    const site = built.servers[0]?.sites[0];
    const result = await site?.handler.serveDNS(ctx, writer, newQuery("a.", 1));
    assert.deepEqual(trail, ["errors", "log", "cache", "forward"]);
    assert.equal(result?.rcode, 2, "the end of the chain is SERVFAIL");
    assert.deepEqual(built.enabled[0]?.plugins, ["errors", "log", "cache", "forward"]);
  });

  test("zones of one block share a chain; blocks on one port share a server", () => {
    const registry = new Map([["log", tracer("log", [])]]);
    const blocks = parseCorefile("a.example b.example:1053 {\n  log\n}\nc.example:1053 {\n  log\n}\n", {
      env: {},
    });
    const built = buildConfig(blocks, { registry, deps: {} });
    assert.deepEqual(
      built.servers.map((s) => [s.port, s.sites.map((x) => x.zone)]),
      [
        [53, ["a.example."]],
        [1053, ["b.example.", "c.example."]],
      ],
    );
  });

  test("setup errors carry the file and line", () => {
    const registry = new Map([["log", tracer("log", [])]]);
    const build = (text: string) => buildConfig(parseCorefile(text, { env: {} }), { registry, deps: {} });
    assert.throws(
      () => build(".:53 {\n  log\n  bogus\n}\n"),
      /^CorefileError: Corefile:3 - Error during parsing: Unknown directive 'bogus'$/,
    );
    assert.throws(
      () => build(".:53 {\n  log\n  log\n}\n"),
      /^CorefileError: plugin\/log: this plugin can only be used once per Server Block$/,
    );
    assert.throws(() => build(".:53 {\n  log\n}\n.:53 {\n  log\n}\n"), /Corefile:4 - .*zone defined twice/);
  });

  test("the stock Corefile builds, in plugin.cfg order; unknown directives are named", () => {
    const blocks = parseCorefile(STOCK_COREFILE, { env: {} });
    const built = buildConfig(blocks, {
      registry: defaultRegistry(),
      deps: { cluster: fixtureCluster(), readResolvConf: () => "nameserver 127.0.0.1\n" },
    });
    assert.deepEqual(built.enabled[0]?.plugins, [
      "reload",
      "ready",
      "health",
      "prometheus",
      "errors",
      "loadbalance",
      "cache",
      "kubernetes",
      "loop",
      "forward",
    ]);
    const withLog = parseCorefile(".:53 {\n  dnstap\n}\n", { env: {} });
    assert.throws(
      () => buildConfig(withLog, { registry: defaultRegistry(), deps: {} }),
      /Corefile:2 - Error during parsing: Unknown directive 'dnstap' \(not available in this build\)/,
    );
    assert.equal(built.readiness.length, 1);
  });
});

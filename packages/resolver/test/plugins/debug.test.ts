import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler } from "../../src/plugin/handler.js";
import { defaultRegistry } from "../../src/registry.js";
import { Resolver } from "../../src/resolver.js";
import { dispatch } from "../../src/server/dispatch.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";
import { LOCAL_PEER } from "../helpers/chain.js";

const crashing: Handler = {
  name: "crash",
  serveDNS: async () => {
    throw new Error("handler blew up");
  },
};

const settingsOf = (corefile: string) =>
  buildConfig(parseCorefile(corefile, { env: {} }), { registry: defaultRegistry(), deps: {} }).servers.map(
    (s) => s.settings.debug ?? false,
  );

describe("debug", () => {
  test("sets debug for the listener its block is on, whichever block on that port has it", () => {
    assert.deepEqual(
      settingsOf(".:53 {\n whoami\n}\nexample.org:53 {\n debug\n whoami\n}\n.:54 {\n whoami\n}\n"),
      [true, false],
    );
  });

  test("without recovery a chain's exception rejects dispatch instead of becoming SERVFAIL", async () => {
    const ctx = {
      sites: [{ zone: ".", handler: crashing }],
      server: "",
      transport: "udp" as const,
      remote: LOCAL_PEER,
    };
    const packet = encodeMessage(newQuery("a.example.", 1));
    assert.equal((await dispatch(packet, ctx)).rcode, 2);
    await assert.rejects(dispatch(packet, { ...ctx, recover: false }), /handler blew up/);
  });

  test("a server under debug ends the process with the exception's stack", () => {
    const script = `
      import { DnsServer } from "./src/server/dns-server.ts";
      import { encodeMessage } from "./src/wire/encode.ts";
      import { newQuery } from "./src/wire/message.ts";
      import * as dgram from "node:dgram";
      const handler = { name: "crash", serveDNS: async () => { throw new Error("handler blew up"); } };
      const server = new DnsServer({ sites: [{ zone: ".", handler }], address: "127.0.0.1", port: 0, settings: { debug: true } });
      await server.start();
      dgram.createSocket("udp4").send(encodeMessage(newQuery("a.example.", 1)), server.address.port, "127.0.0.1");
      setTimeout(() => process.exit(0), 3000);
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: new URL("../..", import.meta.url).pathname,
      encoding: "utf8",
      timeout: 10_000,
    });
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /Error: handler blew up\n\s+at /);
  });

  test("takes no arguments, in any of its stanzas", () => {
    const cases: [string, RegExp][] = [
      [
        "debug off",
        /plugin\/debug: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'off'$/,
      ],
      ["debug\n debug x", /plugin\/debug: Corefile:3 - .*after 'x'$/],
      ["debug {\n  foo\n }", /plugin\/debug: Corefile:2 - .*Unexpected token '\{', expecting argument$/],
    ];
    for (const [body, message] of cases)
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n ${body}\n whoami\n}\n`, { file: "Corefile" }),
        message,
        body,
      );
  });
});

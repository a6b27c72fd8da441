import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import { defaultRegistry } from "../../src/registry.js";
import { Resolver } from "../../src/resolver.js";
import { DnsServer } from "../../src/server/dns-server.js";
import { frame } from "../../src/server/frames.js";
import type { Timers } from "../../src/server/timers.js";
import { systemTimers } from "../../src/server/timers.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";
import { decodeOrFail, tcpSession } from "../helpers/clients.js";
import { staticZone } from "../helpers/static-zone.js";

const settingsOf = (corefile: string) =>
  buildConfig(parseCorefile(corefile, { env: {} }), { registry: defaultRegistry(), deps: {} }).servers.map(
    (s) => s.settings,
  );

/** Real timers, remembering what the server asked for (tcp-connection.test.ts drives them by hand). */
function recordingTimers(): { timers: Timers; asked: number[] } {
  const asked: number[] = [];
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      asked.push(ms);
      return systemTimers.setTimeout(fn, ms);
    },
    clearTimeout: (h) => systemTimers.clearTimeout(h),
  };
  return { timers, asked };
}

describe("timeouts", () => {
  test("sets the TCP timeouts of its server; a later block on the same port overrides", () => {
    const corefile = `.:53 {
 timeouts {
   read 7s
   idle 2m
   write 30
 }
 whoami
}
example.org:53 {
 timeouts {
   idle 1h
   maxtcpqueries 3
 }
 whoami
}
`;
    assert.deepEqual(settingsOf(corefile), [
      { tcpReadTimeoutMs: 7000, tcpIdleTimeoutMs: 3_600_000, tcpWriteTimeoutMs: 30_000, tcpMaxQueries: 3 },
    ]);
  });

  test("the server waits the read timeout for a first query, then the idle one, and stops after maxtcpqueries", async () => {
    const { timers, asked } = recordingTimers();
    const server = new DnsServer({
      sites: [{ zone: ".", handler: staticZone(["a.example.org. 30 IN A 192.0.2.1"]) }],
      address: "127.0.0.1",
      port: 0,
      timers,
      settings: { tcpReadTimeoutMs: 7000, tcpIdleTimeoutMs: 9000, tcpWriteTimeoutMs: 4000, tcpMaxQueries: 2 },
    });
    await server.start();
    try {
      const s = await tcpSession(server.address.port);
      const query = (id: number) => frame(encodeMessage(newQuery("a.example.org.", 1, id)));
      s.socket.write(query(1));
      assert.equal(decodeOrFail(await s.next()).id, 1);
      // Waiting for the second query: the idle timeout.
      s.socket.write(Buffer.concat([query(2), query(3)]));
      assert.equal(decodeOrFail(await s.next()).id, 2);
      // The third query is never read: the connection closes after two.
      await s.closed;
      assert.equal(s.replies.length, 0);
      assert.equal(asked[0], 7000);
      assert.ok(asked.includes(9000) && asked.includes(4000), String(asked));
    } finally {
      await server.stop(100);
    }
  });

  test("setup errors in upstream's wording", () => {
    const cases: [string, RegExp][] = [
      [
        "timeouts x",
        /plugin\/timeouts: plugin\/timeouts: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'x'$/,
      ],
      [
        "timeouts",
        /plugin\/timeouts: plugin\/timeouts: Corefile:2 - .*timeouts block with no timeouts specified$/,
      ],
      [
        "timeouts {\n  read\n }",
        /plugin\/timeouts: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'read'$/,
      ],
      ["timeouts {\n  read 1s 2s\n }", /after '2s'$/],
      ["timeouts {\n  read soon\n }", /Corefile:3 - .*failed to parse duration 'soon'$/],
      ["timeouts {\n  read 500ms\n }", /timeout provided '500ms' needs to be between 1 second and 24 hours$/],
      ["timeouts {\n  idle 25h\n }", /timeout provided '25h0m0s' needs to be between 1 second and 24 hours$/],
      ["timeouts {\n  write -5\n }", /timeout provided '-5s' needs/],
      ["timeouts {\n  linger 5s\n }", /unknown option: 'linger'$/],
      ["timeouts {\n  linger forever\n }", /failed to parse duration 'forever'$/],
      [
        "timeouts {\n  maxtcpqueries 0\n }",
        /maxtcpqueries provided '0' needs to be -1 \(unlimited\) or a positive integer$/,
      ],
      [
        "timeouts {\n  maxtcpqueries many\n }",
        /invalid value for maxtcpqueries 'many': strconv.Atoi: parsing "many": invalid syntax$/,
      ],
    ];
    for (const [body, message] of cases)
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n ${body}\n whoami\n}\n`, { file: "Corefile" }),
        message,
        body,
      );
  });
});

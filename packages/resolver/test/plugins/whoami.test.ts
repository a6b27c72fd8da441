import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { whoamiRecords } from "../../src/plugins/whoami/whoami.js";
import { Resolver } from "../../src/resolver.js";

describe("whoami", () => {
  test("the asker's address and port, IPv4 clients on IPv6 sockets as IPv4, the root name's SRV", () => {
    assert.deepEqual(
      whoamiRecords("Example.org.", 1, { address: "::ffff:10.0.0.7", port: 5353, family: "IPv6" }, "udp"),
      [
        { name: "Example.org.", type: "A", class: 1, ttl: 0, data: "10.0.0.7" },
        {
          name: "_udp.Example.org.",
          type: "SRV",
          class: 1,
          ttl: 0,
          data: { priority: 0, weight: 0, port: 5353, target: "." },
        },
      ],
    );
    const [aaaa, srv] = whoamiRecords(".", 1, { address: "2001:db8::1", port: 7, family: "IPv6" }, "tcp");
    assert.deepEqual([aaaa?.type, aaaa?.data, srv?.name], ["AAAA", "2001:db8::1", "_tcp."]);
  });

  test("takes no arguments and no block, with CoreDNS's message", () => {
    for (const [body, why] of [
      ["whoami extra", "Wrong argument count or unexpected line ending after 'extra'"],
      ["whoami {\n        x\n    }", "Unexpected token '{', expecting argument"],
    ])
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n    ${body}\n}\n`, { file: "Corefile" }),
        (err: Error) => err.message === `plugin/whoami: Corefile:2 - Error during parsing: ${why}`,
      );
    assert.doesNotThrow(() => Resolver.fromCorefile(".:0 {\n    whoami\n    whoami\n}\n"));
  });
});

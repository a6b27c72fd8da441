import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { InterfaceTable } from "../../src/plugins/bind/bind.js";
import { defaultRegistry } from "../../src/registry.js";
import { Resolver } from "../../src/resolver.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";
import { decodeOrFail, udpExchange } from "../helpers/clients.js";

const interfaces: InterfaceTable = {
  eth0: [
    { address: "192.0.2.10", family: "IPv4" },
    { address: "fe80::1", family: "IPv6" },
    { address: "2001:db8::10", family: "IPv6" },
  ],
  lo: [{ address: "127.0.0.1", family: "IPv4" }],
};

const plans = (corefile: string) =>
  buildConfig(parseCorefile(corefile, { env: {} }), {
    registry: defaultRegistry(),
    deps: { interfaces: () => interfaces },
  }).servers.map((s) => ({ address: s.address, port: s.port, zones: s.sites.map((x) => x.zone) }));

describe("bind", () => {
  test("addresses and interfaces become one listener each; except takes some away, per stanza", () => {
    assert.deepEqual(
      plans(".:53 {\n bind eth0 10.0.0.1 {\n   except 2001:db8::10 192.0.2.10\n }\n bind lo\n whoami\n}\n"),
      [
        { address: "fe80::1%eth0", port: 53, zones: ["."] },
        { address: "10.0.0.1", port: 53, zones: ["."] },
        { address: "127.0.0.1", port: 53, zones: ["."] },
      ],
    );
    assert.deepEqual(
      plans(".:53 {\n bind eth0\n whoami\n}\n").map((p) => p.address),
      ["192.0.2.10", "fe80::1%eth0", "2001:db8::10"],
    );
  });

  test("the same zone and port may be served on different addresses, not twice on one", () => {
    assert.deepEqual(
      plans(".:53 {\n bind 127.0.0.2\n whoami\n}\n.:53 {\n bind 127.0.0.3\n whoami\n}\n").length,
      2,
    );
    assert.deepEqual(
      plans("a.org:53 {\n bind 127.0.0.2\n whoami\n}\nb.org:53 {\n bind 127.0.0.2\n whoami\n}\n"),
      [{ address: "127.0.0.2", port: 53, zones: ["a.org.", "b.org."] }],
    );
    assert.throws(
      () => plans(".:53 {\n bind 127.0.0.2\n whoami\n}\n.:53 {\n bind 127.0.0.2\n whoami\n}\n"),
      /cannot serve \. on port 53: zone defined twice/,
    );
  });

  test("a port on all addresses in one block and on some in another is refused", () => {
    assert.throws(
      () => plans("a.org:53 {\n whoami\n}\nb.org:53 {\n bind 127.0.0.2\n whoami\n}\n"),
      /plugin\/bind: port 53 served both on all addresses and on 127.0.0.2 is not supported/,
    );
  });

  test("the server listens on the bound address only, and labels itself with it", async () => {
    const resolver = Resolver.fromCorefile(".:0 {\n bind 127.0.0.2\n whoami\n}\n");
    await resolver.start();
    try {
      const server = resolver.servers[0];
      assert.equal(server?.address.address, "127.0.0.2");
      assert.equal(server?.label, `dns://127.0.0.2:${server?.address.port}`);
      const port = server?.address.port ?? 0;
      const reply = await udpExchange(port, encodeMessage(newQuery("x.", 1, 9)), 500, "127.0.0.2");
      assert.equal(reply && decodeOrFail(reply).id, 9);
      assert.equal(
        await udpExchange(port, encodeMessage(newQuery("x.", 1, 9)), 200),
        undefined,
        "127.0.0.1 unbound",
      );
    } finally {
      await resolver.stop(100);
    }
  });

  test("setup errors in upstream's wording", () => {
    const cases: [string, RegExp][] = [
      ["bind", /plugin\/bind: at least one address or interface name is expected$/],
      ["bind nowhere0", /plugin\/bind: not a valid IP address or interface name: "nowhere0"$/],
      ["bind fe80::1%eth0", /not a valid IP address or interface name: "fe80::1%eth0"$/],
      [
        "bind 127.0.0.1 {\n  except\n }",
        /plugin\/bind: at least one address or interface must be given to except subdirective$/,
      ],
      ["bind 127.0.0.1 {\n  only 127.0.0.1\n }", /plugin\/bind: invalid option "only"$/],
      ["bind 127.0.0.1 {\n  except bogus\n }", /not a valid IP address or interface name: "bogus"$/],
    ];
    for (const [body, message] of cases)
      assert.throws(
        () =>
          Resolver.fromCorefile(`.:0 {\n ${body}\n whoami\n}\n`, {
            file: "Corefile",
            deps: { interfaces: () => interfaces },
          }),
        message,
        body,
      );
  });
});

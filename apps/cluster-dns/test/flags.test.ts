import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FlagError, parseFlags } from "../src/flags.js";

describe("flags", () => {
  test("defaults", () => {
    assert.deepEqual(parseFlags([]), {
      conf: "Corefile",
      dnsPort: 53,
      version: false,
      plugins: false,
      quiet: false,
    });
  });

  test("Go flag syntax: one or two dashes, = or a separate value, bare booleans", () => {
    assert.deepEqual(
      parseFlags(["-conf", "/etc/coredns/Corefile", "--dns.port=1053", "-quiet", "-pidfile=/run/dns.pid"]),
      {
        conf: "/etc/coredns/Corefile",
        dnsPort: 1053,
        version: false,
        plugins: false,
        quiet: true,
        pidfile: "/run/dns.pid",
      },
    );
    assert.equal(parseFlags(["-quiet=false"]).quiet, false);
    assert.equal(parseFlags(["--version"]).version, true);
  });

  test("mistakes name the flag", () => {
    const cases: [string[], RegExp][] = [
      [["-bogus"], /^flag provided but not defined: -bogus$/],
      [["-conf"], /^flag needs an argument: -conf$/],
      [["-dns.port", "70000"], /^invalid value "70000" for flag -dns\.port: not a port$/],
      [["-quiet=maybe"], /^invalid boolean value "maybe" for -quiet$/],
      [["Corefile"], /^unexpected argument 'Corefile'$/],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => parseFlags(argv),
        (err: Error) => err instanceof FlagError && message.test(err.message),
        argv.join(" "),
      );
    }
  });
});

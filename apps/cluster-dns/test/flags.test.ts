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
      workers: 1,
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
        workers: 1,
      },
    );
    assert.equal(parseFlags(["-quiet=false"]).quiet, false);
    assert.equal(parseFlags(["--version"]).version, true);
  });

  test("-workers: a count, or auto for one per core", () => {
    assert.equal(parseFlags(["-workers", "3"]).workers, 3);
    assert.equal(parseFlags(["-workers=auto"], 6).workers, 6);
  });

  test("mistakes name the flag", () => {
    const cases: [string[], RegExp][] = [
      [["-bogus"], /^flag provided but not defined: -bogus$/],
      [["-conf"], /^flag needs an argument: -conf$/],
      [["-dns.port", "70000"], /^invalid value "70000" for flag -dns\.port: not a port$/],
      [["-quiet=maybe"], /^invalid boolean value "maybe" for -quiet$/],
      [["Corefile"], /^unexpected argument 'Corefile'$/],
      [["-workers", "0"], /^invalid value "0" for flag -workers: not "auto" or 1-64$/],
      [["-workers", "two"], /^invalid value "two" for flag -workers: not "auto" or 1-64$/],
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

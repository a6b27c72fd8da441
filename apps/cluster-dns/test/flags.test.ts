import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FlagError, parseFlags } from "../src/flags.js";

describe("flags", () => {
  test("defaults", () => {
    assert.deepEqual(
      parseFlags([], () => 2, {}),
      {
        dnsPort: 53,
        version: false,
        plugins: false,
        quiet: false,
        workers: 1,
        extraArgs: [],
      },
    );
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
        extraArgs: [],
      },
    );
    assert.equal(parseFlags(["-quiet=false"]).quiet, false);
    assert.equal(parseFlags(["--version"]).version, true);
    // -p is CoreDNS's second name for -dns.port; the last one given wins, as with one Go variable.
    assert.equal(parseFlags(["-p", "5300"]).dnsPort, 5300);
    assert.equal(parseFlags(["-dns.port=1", "-p=2"]).dnsPort, 2);
  });

  test("the flags end at -- or at the first argument that is not one; CoreDNS refuses what follows", () => {
    assert.deepEqual(parseFlags(["-quiet", "Corefile", "-conf", "x"]).extraArgs, ["Corefile", "-conf", "x"]);
    assert.equal(parseFlags(["-quiet", "Corefile", "-conf", "x"]).conf, undefined);
    assert.deepEqual(parseFlags(["--", "-quiet"]).extraArgs, ["-quiet"]);
    assert.deepEqual(parseFlags(["-"]).extraArgs, ["-"]);
  });

  test("-workers: a count, or auto for one per core the limits allow", () => {
    assert.equal(parseFlags(["-workers", "3"]).workers, 3);
    assert.equal(parseFlags(["-workers=auto"], () => 6).workers, 6);
  });

  test("$SWITCHYARD_DNS_WORKERS sets -workers's default; the flag and -conf stdin win", () => {
    const env = { SWITCHYARD_DNS_WORKERS: "auto" };
    assert.equal(parseFlags([], () => 4, env).workers, 4);
    assert.equal(parseFlags(["-workers", "1"], () => 4, env).workers, 1);
    assert.equal(parseFlags(["-conf", "stdin"], () => 4, env).workers, 1);
    assert.equal(parseFlags([], () => 4, { SWITCHYARD_DNS_WORKERS: "3" }).workers, 3);
    assert.equal(parseFlags([], () => 4, { SWITCHYARD_DNS_WORKERS: "" }).workers, 1);
    assert.throws(
      () => parseFlags([], () => 4, { SWITCHYARD_DNS_WORKERS: "many" }),
      /^FlagError: invalid value "many" for SWITCHYARD_DNS_WORKERS: not "auto" or 1-64$/,
    );
  });

  test("mistakes name the flag", () => {
    const cases: [string[], RegExp][] = [
      [["-bogus"], /^flag provided but not defined: -bogus$/],
      [["-conf"], /^flag needs an argument: -conf$/],
      [["-dns.port", "70000"], /^invalid value "70000" for flag -dns\.port: not a port$/],
      [["-quiet=maybe"], /^invalid boolean value "maybe" for -quiet$/],
      [["-conf", "stdin", "-workers", "2"], /^-conf stdin takes -workers 1/],
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

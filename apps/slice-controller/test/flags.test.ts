import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runMain } from "@switchyard/kube/testing";
import { DEFAULT_FLAGS, FlagError, main, parseFlags, parseGoDuration, parseHostPort } from "../src/index.js";

const BIN = fileURLToPath(new URL("../bin/switchyard-slice-controller.js", import.meta.url));

describe("parseGoDuration", () => {
  test("reads Go durations into milliseconds", () => {
    assert.equal(parseGoDuration("0"), 0);
    assert.equal(parseGoDuration("1s"), 1000);
    assert.equal(parseGoDuration("1m30s"), 90_000);
    assert.equal(parseGoDuration("250ms"), 250);
    assert.equal(parseGoDuration("1.5h"), 5_400_000);
    assert.equal(parseGoDuration("1500us"), 1.5);
  });
  test("rejects what Go rejects", () => {
    for (const bad of ["", "1", "s", "1x", "1s2", "--1s"]) assert.equal(parseGoDuration(bad), undefined, bad);
  });
});

describe("parseFlags", () => {
  test("defaults are kube-controller-manager's", () => {
    const f = parseFlags([]);
    assert.deepEqual(f, DEFAULT_FLAGS);
    assert.equal(f.concurrentServiceEndpointSyncs, 5);
    assert.equal(f.maxEndpointsPerSlice, 100);
    assert.equal(f.leaderElect, true);
    assert.equal(f.leaseDurationMs, 15_000);
    assert.equal(f.leaseNamespace, "kube-system");
    assert.equal(f.metricsBindAddress, "127.0.0.1:10258");
  });

  test("accepts --name=value, --name value, bare booleans and -v", () => {
    const f = parseFlags([
      "--max-endpoints-per-slice=1000",
      "--concurrent-service-endpoint-syncs",
      "50",
      "--endpointslice-updates-batch-period=1s",
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--healthz-bind-address=[::]:10259",
      "-v=4",
    ]);
    assert.equal(f.maxEndpointsPerSlice, 1000);
    assert.equal(f.concurrentServiceEndpointSyncs, 50);
    assert.equal(f.endpointUpdatesBatchPeriodMs, 1000);
    assert.equal(f.leaderElect, false);
    assert.equal(f.metricsBindAddress, undefined);
    assert.equal(f.healthzBindAddress, "[::]:10259");
    assert.equal(f.verbosity, 4);
    assert.equal(parseFlags(["--leader-elect"]).leaderElect, true);
  });

  test("every bad value names its flag", () => {
    const cases: [string[], RegExp][] = [
      [["--max-endpoints-per-slice=1001"], /--max-endpoints-per-slice: must be an integer from 1 to 1000/],
      [["--concurrent-service-endpoint-syncs=0"], /--concurrent-service-endpoint-syncs/],
      [["--endpointslice-updates-batch-period=soon"], /--endpointslice-updates-batch-period/],
      [["--leader-elect=maybe"], /--leader-elect: want true or false/],
      [["--metrics-bind-address=localhost"], /--metrics-bind-address: want host:port/],
      [["--frobnicate"], /unknown flag: --frobnicate/],
      [["--kubeconfig"], /flag needs an argument: --kubeconfig/],
      [["stray"], /unexpected argument "stray"/],
      [["--leader-elect-renew-deadline=20s"], /--leader-elect-lease-duration must be greater/],
    ];
    for (const [argv, message] of cases)
      assert.throws(
        () => parseFlags(argv),
        (e) => e instanceof FlagError && message.test(e.message),
      );
  });

  test("parseHostPort", () => {
    assert.deepEqual(parseHostPort("127.0.0.1:10258"), { host: "127.0.0.1", port: 10258 });
    assert.deepEqual(parseHostPort("[::1]:80"), { host: "::1", port: 80 });
    assert.deepEqual(parseHostPort(":80"), { host: "", port: 80 });
    assert.equal(parseHostPort("host:99999"), undefined);
  });
});

describe("the program", () => {
  const run = (...argv: string[]) =>
    spawnSync(process.execPath, [BIN, ...argv], { encoding: "utf8", timeout: 30_000 });

  test("a bad flag is one line on stderr and exit code 2", () => {
    const r = run("--max-endpoints-per-slice=0");
    assert.equal(r.status, 2);
    assert.equal(
      r.stderr,
      'switchyard-slice-controller: invalid value "0" for flag --max-endpoints-per-slice: must be an integer from 1 to 1000\n',
    );
  });

  test("an unreachable apiserver is one line naming its address, exit code 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "slice-controller-cli-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
      ].join("\n"),
    );
    const r = run(`--kubeconfig=${kubeconfig}`, "--metrics-bind-address=0");
    assert.equal(r.status, 1);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0] ?? "",
      /^switchyard-slice-controller: cannot reach the apiserver at https:\/\/127\.0\.0\.1:1: /,
    );
    // --master replaces the kubeconfig's server, as kube-controller-manager's client-go does.
    const master = run(
      `--kubeconfig=${kubeconfig}`,
      "--master=https://127.0.0.1:2",
      "--metrics-bind-address=0",
    );
    assert.equal(master.status, 1);
    assert.match(
      master.stderr,
      /^switchyard-slice-controller: cannot reach the apiserver at https:\/\/127\.0\.0\.1:2: /,
    );
  });

  test("-h, --version and an unknown flag's suggestion, as kube-controller-manager's cobra and verflag have them", async () => {
    const inProcess = (...argv: string[]) => runMain(main, ...argv);
    const short = await inProcess("-h");
    assert.deepEqual([short.code, short.err], [0, ""]);
    assert.match(short.out, /^Usage: switchyard-slice-controller \[flags\]\n/);
    assert.match(short.out, /\n {2}-h, --help\n/);
    assert.deepEqual(await inProcess("--version"), {
      code: 0,
      out: "Switchyard-Slice-Controller v0.1.0 (kube-controller-manager v1.37.2 compatible)\n",
      err: "",
    });
    const raw = await inProcess("--version=raw");
    assert.equal(JSON.parse(raw.out).compatibleWith, "kube-controller-manager v1.37.2");
    assert.deepEqual(await inProcess("--controlers=x"), {
      code: 2,
      out: "",
      err: "switchyard-slice-controller: unknown flag: --controlers; did you mean --controllers?\n",
    });
    assert.equal((await inProcess("--version=maybe")).code, 2);
  });

  test("--help prints every flag", () => {
    const r = run("--help");
    assert.equal(r.status, 0);
    for (const flag of [
      "--kubeconfig",
      "--max-endpoints-per-slice",
      "--leader-elect-resource-namespace",
      "--healthz-bind-address",
    ]) {
      assert.ok(r.stdout.includes(flag), flag);
    }
  });
});

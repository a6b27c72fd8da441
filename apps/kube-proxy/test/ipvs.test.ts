// IPVS mode in the app: the ipvs config section and --ipvs-* flags, the start-up steps
// (availability, timeouts) through an injected exec, and the one-line exit when this kernel
// lacks IP_VS (run for real: this kernel has no ip_vs module).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { PROC_IP_VS, silentLogger } from "@switchyard/proxier";
import { FlagError, parseCommandLine } from "../src/cli/flags.js";
import { defaultConfig, resolve } from "../src/config/config.js";
import { parseConfigFile } from "../src/config/config-file.js";
import { configureIPVSTimeouts, IPVSStartError, prepareIPVS } from "../src/ipvs-setup.js";
import { loadConfiguration, main } from "../src/main.js";

const FILE = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
ipvs:
  scheduler: wlc
  syncPeriod: 20s
  minSyncPeriod: 2s
  excludeCIDRs: ["10.9.0.0/16"]
  strictARP: true
  tcpTimeout: 900s
  tcpFinTimeout: 120s
  udpTimeout: 300s
`;

test("the ipvs section of a config file", () => {
  const o = resolve(parseConfigFile(FILE));
  assert.equal(o.mode, "ipvs");
  assert.equal(o.syncPeriodMs, 20_000);
  assert.equal(o.minSyncPeriodMs, 2000);
  assert.deepEqual(o.ipvs, {
    minSyncPeriodMs: 2000,
    syncPeriodMs: 20_000,
    scheduler: "wlc",
    excludeCIDRs: ["10.9.0.0/16"],
    strictARP: true,
    tcpTimeoutMs: 900_000,
    tcpFinTimeoutMs: 120_000,
    udpTimeoutMs: 300_000,
  });
  // Without a section: upstream's ipvs defaults (minSyncPeriod 0, syncPeriod 30s).
  const d = resolve({ ...defaultConfig(), mode: "ipvs" });
  assert.equal(d.minSyncPeriodMs, 0);
  assert.equal(d.syncPeriodMs, 30_000);
});

test("--ipvs-* flags", () => {
  const cl = parseCommandLine([
    "--proxy-mode=ipvs",
    "--ipvs-scheduler=mh",
    "--ipvs-sync-period=10s",
    "--ipvs-min-sync-period=1s",
    "--ipvs-exclude-cidrs=10.9.0.0/16, fd00:9::/64",
    "--ipvs-strict-arp",
    "--ipvs-tcp-timeout=15m",
    "--ipvs-tcpfin-timeout=2m",
    "--ipvs-udp-timeout=5m",
    "--masquerade-all",
  ]);
  const o = resolve(cl.apply(defaultConfig(), false));
  assert.equal(o.mode, "ipvs");
  assert.equal(o.syncPeriodMs, 10_000);
  assert.equal(o.minSyncPeriodMs, 1000);
  assert.equal(o.masqueradeAll, true, "ipvs mode reads --masquerade-all from the iptables section");
  assert.deepEqual(o.ipvs, {
    minSyncPeriodMs: 1000,
    syncPeriodMs: 10_000,
    scheduler: "mh",
    excludeCIDRs: ["10.9.0.0/16", "fd00:9::/64"],
    strictARP: true,
    tcpTimeoutMs: 900_000,
    tcpFinTimeoutMs: 120_000,
    udpTimeoutMs: 300_000,
  });
  assert.throws(() => parseCommandLine(["--ipvs-strict-arp=maybe"]), FlagError);
  // As upstream's validation: the excluded CIDRs are checked in IPVS mode only (upstream-decisions.test.ts).
  const load = (...argv: string[]) => loadConfiguration(parseCommandLine(argv), () => "");
  assert.throws(
    () => load("--proxy-mode=ipvs", "--ipvs-exclude-cidrs=10.9.0.0"),
    /ExcludeCidrs\[0\]: Invalid value: "10\.9\.0\.0": must be a valid CIDR/,
  );
  assert.deepEqual(load("--ipvs-exclude-cidrs=10.9.0.0").ipvs.excludeCIDRs, ["10.9.0.0"]);
});

test("start-up checks IPVS first; the timeouts come after the sysctls (./ipvs-settings.test.ts)", async () => {
  const calls: string[] = [];
  const exec = async (command: string, args: readonly string[]) => {
    calls.push([command, ...args].join(" "));
    return { code: 0, stdout: "", stderr: "" };
  };
  const ctx = { exec, logger: silentLogger, exists: () => true };
  await prepareIPVS(ctx);
  assert.deepEqual(calls, ["ipvsadm -Ln"], "no sysctl goes through exec any more");
  calls.length = 0;
  await configureIPVSTimeouts(resolve({ ...defaultConfig(), mode: "ipvs" }), ctx);
  assert.deepEqual(calls, [], "all-zero timeouts keep the kernel's");
  await configureIPVSTimeouts(resolve(parseConfigFile(FILE)), ctx);
  assert.deepEqual(calls, ["ipvsadm --set 900 120 300"]);
});

test("a failed ipvsadm --set is only logged, in upstream's words", async () => {
  const errors: string[] = [];
  const logger = { ...silentLogger, error: (msg: string) => errors.push(msg) };
  const exec = async () => ({ code: 1, stdout: "", stderr: "nope" });
  await configureIPVSTimeouts(resolve(parseConfigFile(FILE)), { exec, logger, exists: () => true });
  assert.deepEqual(errors, ["Failed to configure IPVS timeouts"]);
});

test("ipvsadm's own complaint also means IPVS is unavailable", async () => {
  const exec = async () => ({
    code: 2,
    stdout: "",
    stderr:
      "Can't initialize ipvs: Protocol not available\nAre you sure that IP Virtual Server is built in the kernel or as module?\n",
  });
  await assert.rejects(prepareIPVS({ exec, logger: silentLogger, exists: () => true }), (e: unknown) => {
    assert.ok(e instanceof IPVSStartError);
    assert.match(e.message, /^can't use the IPVS proxier: kernel module ip_vs is not loaded/);
    return true;
  });
});

test("on this kernel (no ip_vs) --proxy-mode=ipvs exits 1 with one line naming the module", async (t) => {
  if (existsSync(PROC_IP_VS)) return t.skip("this kernel has IPVS");
  let err = "";
  const code = await main({
    argv: ["--proxy-mode=ipvs", "--hostname-override=node1", "--kubeconfig=/nonexistent"],
    stdout: { write: () => true },
    stderr: { write: (s: string) => (err += s) },
    stopSignal: new Promise(() => {}),
  });
  assert.equal(code, 1);
  const lines = err.trim().split("\n");
  assert.equal(lines.length, 1, err);
  assert.match(
    lines[0] ?? "",
    /^switchyard-proxy: can't use the IPVS proxier: kernel module ip_vs is not loaded/,
  );
});

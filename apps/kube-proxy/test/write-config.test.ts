// --write-config-to against kube-proxy v1.37.2 itself (packages/testbed/upstream's binary): the same flags,
// or the same --config file, and the two files written must be byte for byte the same.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import { resolveBinary } from "@switchyard/testbed";
import { main } from "../src/main.js";
import { KUBEADM } from "./kubeadm-config.js";

const upstream = resolveBinary("kube-proxy").path;
const dir = mkdtempSync(join(tmpdir(), "write-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function both(name: string, argv: string[]): Promise<[string, string]> {
  const theirs = join(dir, `${name}.upstream.yaml`);
  const ours = join(dir, `${name}.ours.yaml`);
  await promisify(execFile)(upstream ?? "kube-proxy", [...argv, `--write-config-to=${theirs}`]);
  const code = await main({
    argv: [...argv, `--write-config-to=${ours}`],
    stdout: { write: () => true },
    stderr: { write: () => true },
    stopSignal: new Promise(() => {}),
  });
  assert.equal(code, 0);
  return [readFileSync(theirs, "utf8"), readFileSync(ours, "utf8")];
}

describe("--write-config-to writes what kube-proxy v1.37.2 writes", {
  skip: upstream ? undefined : "no kube-proxy binary: run npx switchyard-lab upstream build",
}, () => {
  test("the defaults", async () => {
    const [theirs, ours] = await both("defaults", []);
    assert.equal(ours, theirs);
  });

  test("a DaemonSet's worth of flags (nftables mode, the generic sync periods, detect-local, conntrack, oom)", async () => {
    const [theirs, ours] = await both("flags", [
      ...["--proxy-mode=nftables", "--iptables-sync-period=7s", "--iptables-min-sync-period=2s"],
      ...["--cluster-cidr=10.244.0.0/16", "--oom-score-adj=-500", "--metrics-bind-address=0.0.0.0:10249"],
      ...["--masquerade-all", "--nodeport-addresses=primary", "--detect-local-mode=InterfaceNamePrefix"],
      ...[
        "--pod-interface-name-prefix=veth",
        "--conntrack-max-per-core=0",
        "--v=2",
        "--hostname-override=Node-A",
      ],
      "--healthz-port=10266",
    ]);
    assert.equal(ours, theirs);
  });

  test("the fields this proxy keeps but does not act on: client tuning, logging, gates, profiling", async () => {
    const [theirs, ours] = await both("recorded", [
      ...["--kube-api-qps=50.5", "--kube-api-burst=0x20", "--kube-api-content-type=application/json"],
      ...["--profiling", "--show-hidden-metrics-for-version=1.36", "--config-sync-period=90s"],
      ...["--feature-gates=LoggingAlphaOptions=true,KubeProxyIPVS=true", "--vmodule=proxier*=4,x=1"],
      ...["--log-flush-frequency=2s", "--log-text-split-stream", "--log-text-info-buffer-size=1Ki"],
      "--v=5",
    ]);
    assert.equal(ours, theirs);
    const file = join(dir, "recorded.conf");
    writeFileSync(
      file,
      KUBEADM.replace("  qps: 0", "  qps: 7.5")
        .replace("flushFrequency: 0", "flushFrequency: 3000000000\n  format: json")
        .replace("enableProfiling: false", "enableProfiling: true\nfeatureGates:\n  KubeProxyIPVS: false")
        .replace("configSyncPeriod: 0s", "configSyncPeriod: 1h")
        .replace('  networkName: ""', "  networkName: l2bridge"),
    );
    const [fromFile, oursFromFile] = await both("recorded-file", [
      `--config=${file}`,
      "--logging-format=text",
    ]);
    assert.equal(oursFromFile, fromFile);
  });

  test("kubeadm's ConfigMap file through --config, with --hostname-override", async () => {
    const file = join(dir, "kubeadm.conf");
    writeFileSync(
      file,
      KUBEADM.replace('mode: ""', "mode: nftables").replace('clusterCIDR: ""', "clusterCIDR: 10.244.0.0/16"),
    );
    const [theirs, ours] = await both("kubeadm", [`--config=${file}`, "--hostname-override=node-1"]);
    assert.equal(ours, theirs);
  });
});

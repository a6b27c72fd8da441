// nfacct on a scripted Exec: the commands NfacctCLI runs and how it reads their answers (what nfacct v1.0.2
// prints, exit codes included), the iptables backend's counters on full syncs, and the two metrics read at scrape.
// The same paths against the kernel: apps/kube-proxy/test/nfacct.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import { IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import {
  CT_STATE_INVALID_NFACCT,
  LOCALHOST_NODEPORTS_NFACCT,
  registerNfacctMetrics,
} from "../../src/metrics/nfacct-metrics.js";
import { NfacctCLI, NfacctNotFoundError, parseNfacctObject } from "../../src/nfacct/nfacct.js";
import { IPTablesProxyBackend } from "../../src/proxier/iptables-backend.js";
import { buildMaps, iptOptions } from "../../src/testing/fixtures.js";
import { type Call, fakeExec } from "../apply/fake-exec.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";

const ENOENT = { code: 1, stderr: "nfacct v1.0.2: error: No such file or directory\n" };
const object = (name: string, pkts: number, bytes = pkts * 60) =>
  `{ pkts = ${String(pkts).padStart(20, "0")}, bytes = ${String(bytes).padStart(20, "0")} } = ${name};\n`;

/** A kernel's nfacct objects behind the CLI; `refuse` names objects whose creation fails. */
function kernel(objects: Map<string, number>, refuse: ReadonlySet<string> = new Set()) {
  return (call: Call) => {
    if (call.command !== "nfacct") return {};
    const [verb, name = ""] = call.args;
    if (verb === "get") {
      const pkts = objects.get(name);
      return pkts === undefined ? ENOENT : { stdout: object(name, pkts) };
    }
    if (verb === "add") {
      if (refuse.has(name)) return { code: 1, stderr: "nfacct v1.0.2: error: Cannot allocate memory\n" };
      if (objects.has(name)) return { code: 1, stderr: "nfacct v1.0.2: error: Device or resource busy\n" };
      objects.set(name, 0);
      return {};
    }
    return { code: 1, stderr: "unexpected" };
  };
}

describe("NfacctCLI", () => {
  test("reads an object line as nfacct prints it", () => {
    assert.deepEqual(parseNfacctObject(object("localhost_nps_accepted_pkts", 3, 180)), {
      name: "localhost_nps_accepted_pkts",
      packets: 3,
      bytes: 180,
    });
    assert.equal(parseNfacctObject("nfacct v1.0.2: error: No such file or directory"), undefined);
  });

  test("open asks for an object that may not exist; a missing one is fine, anything else is not available", async () => {
    const ok = fakeExec(kernel(new Map()));
    await NfacctCLI.open(ok.exec);
    assert.deepEqual(ok.calls[0]?.args, ["get", "IMayExist"]);
    const noKernel = fakeExec(() => ({ code: 1, stderr: "nfacct v1.0.2: error: Protocol not supported\n" }));
    await assert.rejects(
      NfacctCLI.open(noKernel.exec),
      /^NfacctError: nfacct sub-system not available: .*Protocol/,
    );
    const noTool = fakeExec(() => "missing");
    await assert.rejects(
      NfacctCLI.open(noTool.exec),
      /nfacct sub-system not available: nfacct: command not found/,
    );
  });

  test("ensure adds only a missing object; get tells a missing one apart", async () => {
    const objects = new Map([["present", 7]]);
    const { exec, calls } = fakeExec(kernel(objects));
    const cli = new NfacctCLI(exec);
    await cli.ensure("present");
    await cli.ensure("absent");
    assert.deepEqual(
      calls.map((c) => c.args.join(" ")),
      ["get present", "get absent", "add absent"],
    );
    assert.deepEqual(await cli.get("present"), { name: "present", packets: 7, bytes: 420 });
    await assert.rejects(cli.get("gone"), NfacctNotFoundError);
    // The kernel's limit, checked before asking (upstream's ErrNameExceedsMaxLength).
    await assert.rejects(cli.get("x".repeat(32)), /exceeds the maximum allowed length of 31/);
    const refusing = fakeExec(kernel(new Map(), new Set(["full"])));
    await assert.rejects(
      new NfacctCLI(refusing.exec).ensure("full"),
      /^NfacctError: nfacct add full: .*Cannot allocate memory/,
    );
  });
});

describe("the iptables backend's nfacct counters", () => {
  const services = goldenServices((n) => `172.30.0.${n}`);
  const input = () => ({ ...buildMaps("IPv4", services, goldenSlices()), now: 0 });
  const restored = (calls: readonly Call[]) =>
    calls
      .filter((c) => c.command === "iptables-nft-restore")
      .map((c) => c.stdin ?? "")
      .join("\n");

  test("a full sync ensures both and the rules count with them", async () => {
    const objects = new Map<string, number>();
    const { exec, calls } = fakeExec(kernel(objects));
    const backend = new IPTablesProxyBackend({
      options: iptOptions(),
      ipt: new IptablesRestoreApplier({ family: "IPv4", backend: "nft", exec }),
      nfacct: new NfacctCLI(exec),
    });
    await backend.sync(input());
    assert.deepEqual([...objects.keys()].sort(), [CT_STATE_INVALID_NFACCT, LOCALHOST_NODEPORTS_NFACCT]);
    const rules = restored(calls);
    assert.match(rules, /--ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP/);
    assert.match(
      rules,
      /-d 127\.0\.0\.0\/8 --dport \d+ -m nfacct --nfacct-name localhost_nps_accepted_pkts -j /,
    );
  });

  test("a counter the kernel refuses is logged and left out of the rules; the other stays", async () => {
    const errors: [string, Record<string, unknown> | undefined][] = [];
    const { exec, calls } = fakeExec(kernel(new Map(), new Set([CT_STATE_INVALID_NFACCT])));
    const backend = new IPTablesProxyBackend({
      options: iptOptions(),
      ipt: new IptablesRestoreApplier({ family: "IPv4", backend: "nft", exec }),
      nfacct: new NfacctCLI(exec),
      logger: { info() {}, warn() {}, error: (msg, fields) => errors.push([msg, fields]) },
    });
    await backend.sync(input());
    const rules = restored(calls);
    assert.match(rules, /--ctstate INVALID -j DROP/);
    assert.doesNotMatch(rules, /ct_state_invalid_dropped_pkts/);
    assert.match(rules, /--nfacct-name localhost_nps_accepted_pkts/);
    assert.deepEqual(
      errors.map(([msg, f]) => [msg, f?.counter]),
      [
        [
          "Failed to create nfacct counter; the corresponding metric will not be updated",
          CT_STATE_INVALID_NFACCT,
        ],
      ],
    );
  });

  test("without nfacct no rule names a counter and nfacct is never run", async () => {
    const { exec, calls } = fakeExec(kernel(new Map()));
    const backend = new IPTablesProxyBackend({
      options: iptOptions(),
      ipt: new IptablesRestoreApplier({ family: "IPv4", backend: "nft", exec }),
    });
    await backend.sync(input());
    assert.doesNotMatch(restored(calls), /nfacct/);
    assert.ok(!calls.some((c) => c.command === "nfacct"));
  });
});

describe("the nfacct metrics", () => {
  test("each scrape reads the packet counts; an object that cannot be read gives no sample and an error line", async () => {
    const objects = new Map([[LOCALHOST_NODEPORTS_NFACCT, 4]]);
    const errors: string[] = [];
    const registry = new Registry();
    registerNfacctMetrics(registry, new NfacctCLI(fakeExec(kernel(objects)).exec), {
      info() {},
      warn() {},
      error: (msg, fields) => errors.push(`${msg} ${fields?.counter}`),
    });
    let text = await registry.metrics();
    assert.match(
      text,
      /^# HELP kubeproxy_iptables_localhost_nodeports_accepted_packets_total \[ALPHA\] Number of packets accepted on nodeports of loopback interface\n# TYPE kubeproxy_iptables_localhost_nodeports_accepted_packets_total counter\nkubeproxy_iptables_localhost_nodeports_accepted_packets_total 4$/m,
    );
    assert.match(
      text,
      /^# HELP kubeproxy_iptables_ct_state_invalid_dropped_packets_total \[ALPHA\] packets dropped by iptables to work around conntrack problems$/m,
    );
    assert.doesNotMatch(text, /^kubeproxy_iptables_ct_state_invalid_dropped_packets_total /m);
    assert.deepEqual(errors, [`failed to collect nfacct counter ${CT_STATE_INVALID_NFACCT}`]);
    objects.set(CT_STATE_INVALID_NFACCT, 2);
    objects.set(LOCALHOST_NODEPORTS_NFACCT, 9);
    text = await registry.metrics();
    assert.match(text, /^kubeproxy_iptables_ct_state_invalid_dropped_packets_total 2$/m);
    assert.match(text, /^kubeproxy_iptables_localhost_nodeports_accepted_packets_total 9$/m);
  });
});

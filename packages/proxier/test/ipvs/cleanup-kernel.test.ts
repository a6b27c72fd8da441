// Removing IPVS mode's leftovers for real, in a network namespace: a full IPVS sync's ipsets,
// iptables rules (which match those sets) and kube-ipvs0 with its VIPs are applied through
// the real ipset, iptables-restore and ip; then platformCleanup (starting in iptables mode,
// and --cleanup) must leave no KUBE ipset, no kube-ipvs0 and no IPVS chain. ipvsadm is
// skipped: this kernel has no ip_vs, which is also what cleanup must cope with. It has no
// dummy module either, so when `type dummy` is refused the leftover kube-ipvs0 is a bridge
// (cleanup deletes the link by name, whatever its type).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { platformCleanup } from "../../src/apply/cleanup.js";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import { IPVSApplier } from "../../src/apply/ipvs-applier.js";
import { renderIPVS } from "../../src/ipvs/render.js";
import { ensureIPVSJumpChains } from "../../src/ipvs/skeleton.js";
import { runSkeleton } from "../../src/proxier/run-skeleton.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { kernelTestsUnavailable } from "../kernel/topology.js";
import { ipvsOptions } from "./helpers.js";

const NS = `sy-ipvs-clean-${process.pid}`;
const exec = inNetns(NS, realExec);

async function run(command: string, args: string[]): Promise<string> {
  const r = await exec(command, args);
  assert.equal(r.code, 0, `${command} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** Programs a small IPVS-mode node (minus IPVS itself) into the namespace. */
async function leaveIPVSBehind(ipvs: IPVSApplier, ipt: IptablesRestoreApplier): Promise<void> {
  const maps = buildMaps(
    "IPv4",
    [
      makeService("ns1", "svc1", {
        type: "NodePort",
        clusterIP: "172.30.0.41",
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [{ addresses: ["10.180.0.1"], nodeName: "node1" }],
        [{ name: "p80", port: 80 }],
      ),
    ],
  );
  const r = renderIPVS(ipvsOptions(), maps);
  await ipvs.restoreIPSets(r.ipsetFull);
  await runSkeleton(ipt, ensureIPVSJumpChains);
  await ipt.restore(r.iptablesRestore, { noflush: true, counters: true });
  try {
    await ipvs.ensureDummy();
  } catch {
    await run("ip", ["link", "add", "kube-ipvs0", "type", "bridge"]);
  }
  for (const ip of r.bind.add) await ipvs.bind(ip);
}

describe("IPVS leftovers are removed from a real kernel", async () => {
  const skip = await kernelTestsUnavailable(["ipset", "iptables-restore"]);
  before(async () => {
    if (!skip) assert.equal((await realExec("ip", ["netns", "add", NS])).code, 0);
  });
  after(async () => {
    if (!skip) await realExec("ip", ["netns", "del", NS]);
  });

  for (const [label, mode, cleanupAndExit] of [
    ["starting in iptables mode", "iptables", false],
    ["--cleanup", "nftables", true],
  ] as const) {
    test(label, { skip: skip ?? false }, async () => {
      const ipvs = new IPVSApplier({ exec });
      const ipt = new IptablesRestoreApplier({ family: "IPv4", exec });
      await leaveIPVSBehind(ipvs, ipt);
      assert.match(await run("ipset", ["list", "-n"]), /^KUBE-CLUSTER-IP$/m);
      assert.deepEqual(await ipvs.boundAddresses(), ["172.30.0.41"]);
      // A set that is not ours must survive.
      await run("ipset", ["create", "OTHER-SET", "hash:ip", "-exist"]);
      // Referenced sets cannot be destroyed: proves the rules really match them.
      const busy = await exec("ipset", ["destroy", "KUBE-CLUSTER-IP"]);
      assert.notEqual(busy.code, 0);

      await platformCleanup({ iptables: [ipt], ipvs }, mode, cleanupAndExit);

      assert.equal((await run("ipset", ["list", "-n"])).trim(), "OTHER-SET");
      const link = await exec("ip", ["link", "show", "kube-ipvs0"]);
      assert.notEqual(link.code, 0, "kube-ipvs0 is gone");
      for (const table of ["nat", "filter"] as const) {
        const save = await ipt.save(table);
        assert.doesNotMatch(save, /KUBE-(NODE-PORT|LOAD-BALANCER|IPVS-|SOURCE-RANGES)|--match-set/, save);
      }
      await run("ipset", ["destroy", "OTHER-SET"]);
    });
  }
});

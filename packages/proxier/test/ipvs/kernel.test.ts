// The ipset and iptables programs applied for real, in a network namespace: the kernel's
// `ipset list` must equal the fake's after a full sync and after a diff, and the kernel must
// accept the iptables rules (which match those sets). IPVS itself cannot be applied: this
// kernel has no ip_vs, so neither virtual servers nor `-m ipvs` rules load here.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { canonicalIPSetList, FakeIPSet } from "../../src/ipvs/fake-ipset.js";
import { renderIPVS } from "../../src/ipvs/render.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { kernelTestsUnavailable } from "../kernel/topology.js";
import { FakeKernel, ipvsOptions } from "./helpers.js";

const NS = `sy-ipvs-${process.pid}`;
const exec = inNetns(NS, realExec);
const p80 = [{ name: "p80", port: 80 }];

function cluster(second: string) {
  return buildMaps(
    "IPv4",
    [
      makeService(
        "ns1",
        "lb",
        {
          type: "LoadBalancer",
          clusterIP: "172.30.0.41",
          externalIPs: ["192.168.99.11"],
          externalTrafficPolicy: "Local",
          healthCheckNodePort: 30000,
          // The node is inside the ranges: no `-m ipvs` rule, which this kernel cannot load.
          loadBalancerSourceRanges: ["203.0.113.0/25", "192.168.0.0/24"],
          ports: [
            { name: "p80", port: 80, protocol: "TCP", nodePort: 3001 },
            { name: "u", port: 53, protocol: "UDP", nodePort: 3002 },
            { name: "s", port: 9, protocol: "SCTP", nodePort: 3003 },
          ],
        },
        { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
      ),
      makeService("ns2", "svc2", {
        clusterIP: "172.30.0.42",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "lb",
        "a",
        [{ addresses: ["10.180.0.1"], nodeName: "node1" }],
        [...p80, { name: "u", port: 53, protocol: "UDP" }, { name: "s", port: 9, protocol: "SCTP" }],
      ),
      makeSlice("ns2", "svc2", "a", [{ addresses: [second], nodeName: "node1" }], p80),
    ],
  );
}

async function run(command: string, args: string[], stdin?: string): Promise<string> {
  const r = await exec(command, args, stdin === undefined ? {} : { stdin });
  assert.equal(r.code, 0, `${command} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

describe("ipvs ipsets and iptables in a real kernel", async () => {
  const skip = await kernelTestsUnavailable(["ipset", "iptables-restore"]);
  before(async () => {
    if (!skip) assert.equal((await realExec("ip", ["netns", "add", NS])).code, 0);
  });
  after(async () => {
    if (!skip) await realExec("ip", ["netns", "del", NS]);
  });

  test("ipset restore: full sync, then a diff, match the fake", { skip: skip ?? false }, async () => {
    const opts = ipvsOptions();
    const fake = new FakeIPSet();
    const first = renderIPVS(opts, cluster("10.180.0.2"));
    fake.restore(first.ipsetFull);
    await run("ipset", ["restore"], first.ipsetFull);
    assert.equal(canonicalIPSetList(await run("ipset", ["list"])), canonicalIPSetList(fake.list()));
    assert.ok(fake.members("KUBE-LOAD-BALANCER-SOURCE-CIDR")?.includes("1.2.3.4,tcp:80,192.168.0.0/24"));

    const second = renderIPVS(opts, cluster("10.180.0.3"), first.state);
    assert.match(second.ipsetDiff, /^del KUBE-LOOP-BACK 10\.180\.0\.2,tcp:80,10\.180\.0\.2$/m);
    fake.restore(second.ipsetDiff);
    await run("ipset", ["restore"], second.ipsetDiff);
    assert.equal(canonicalIPSetList(await run("ipset", ["list"])), canonicalIPSetList(fake.list()));
  });

  test("iptables-restore accepts the rules, and the kernel holds what the fake holds", {
    skip: skip ?? false,
  }, async () => {
    const r = renderIPVS(ipvsOptions(), cluster("10.180.0.2"));
    await run("ipset", ["restore"], r.ipsetFull);
    await run("iptables-restore", ["-w", "5", "--noflush"], r.iptablesRestore);
    const kernel = new FakeKernel(["192.168.0.2"]);
    kernel.iptables.restore(r.iptablesRestore, { noflush: true });
    for (const table of ["nat", "filter"] as const) {
      const saved = await run("iptables-save", ["-t", table]);
      const count = (chain: string) => saved.split("\n").filter((l) => l.startsWith(`-A ${chain} `)).length;
      for (const chain of kernel.iptables.chains(table).filter((c) => c.startsWith("KUBE-"))) {
        assert.equal(count(chain), kernel.iptables.rules(table, chain)?.length, `${table}/${chain}`);
      }
    }
    // The sets the rules name exist in the kernel (iptables-restore would have failed otherwise).
    assert.match(
      await run("iptables-save", ["-t", "nat"]),
      /--match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE/,
    );
  });
});

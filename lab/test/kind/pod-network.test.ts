import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type PodNetworkNode, podNetworkNodes, podNetworkScript } from "../../src/kind/pod-network.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const node = (name: string, podCIDR: string | undefined, ip: string | undefined) => ({
  metadata: { name },
  spec: podCIDR ? { podCIDR } : {},
  status: {
    addresses: ip
      ? [
          { type: "Hostname", address: name },
          { type: "InternalIP", address: ip },
        ]
      : null,
  },
});
/** A dual-stack node as the API has it: podCIDRs and an InternalIP per family, the primary first. */
const dualNode = (name: string, i: number, families = 2) => ({
  metadata: { name },
  spec: {
    podCIDR: `10.244.${i}.0/24`,
    podCIDRs: [`10.244.${i}.0/24`, `fd00:10:244:${i}::/64`].slice(0, families),
  },
  status: {
    addresses: [
      { type: "InternalIP", address: `172.18.0.${i + 2}` },
      { type: "InternalIP", address: `fc00:f853:ccd:e793::${i + 2}` },
      { type: "Hostname", address: name },
    ],
  },
});
const three = [
  node("lab-control-plane", "10.244.0.0/24", "172.18.0.2"),
  node("lab-worker", "10.244.1.0/24", "172.18.0.3"),
  node("lab-worker2", "10.244.2.0/24", "172.18.0.4"),
];

/** Runs the script in sh with `ip` replaced by a stub that records its arguments. */
function run(me: PodNetworkNode, all: PodNetworkNode[]) {
  const dir = mkdtempSync(join(tmpdir(), "pod-network-"));
  dirs.push(dir);
  writeFileSync(join(dir, "ip"), `#!/bin/sh\necho "$@" >> ${dir}/routes\n`);
  chmodSync(join(dir, "ip"), 0o755);
  const conf = join(dir, "net.d", "10-switchyard.conflist");
  const r = spawnSync("sh", ["-c", podNetworkScript(me, all, conf)], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
  });
  const routes = readFileSync(join(dir, "routes"), "utf8").trim().split("\n");
  return { ...r, conf: readFileSync(conf, "utf8"), routes };
}

describe("the kind lab's pod network", () => {
  test("nodes: each with its podCIDR and InternalIP once all are there; until then what is missing", () => {
    assert.equal(podNetworkNodes(three.slice(0, 2), 3), "2 of 3 nodes registered");
    assert.equal(
      podNetworkNodes([...three.slice(0, 2), node("lab-worker2", undefined, "172.18.0.4")], 3),
      "no podCIDR or address yet: lab-worker2",
    );
    assert.equal(
      podNetworkNodes([...three.slice(0, 2), node("lab-worker2", "10.244.2.0/24", undefined)], 3),
      "no podCIDR or address yet: lab-worker2",
    );
    assert.deepEqual(podNetworkNodes(three, 3), [
      { name: "lab-control-plane", podCidrs: ["10.244.0.0/24"], addresses: ["172.18.0.2"] },
      { name: "lab-worker", podCidrs: ["10.244.1.0/24"], addresses: ["172.18.0.3"] },
      { name: "lab-worker2", podCidrs: ["10.244.2.0/24"], addresses: ["172.18.0.4"] },
    ]);
  });

  test("what the API would never send is refused before it reaches a shell", () => {
    assert.throws(
      () => podNetworkNodes([node("lab-worker", "10.244.1.0/24; reboot", "172.18.0.3")], 1),
      /not a name, CIDR and address the pod network can use/,
    );
  });

  test("the script writes the node's own range into the CNI config and routes every other range via its node", () => {
    const nodes = podNetworkNodes(three, 3) as PodNetworkNode[];
    const r = run(nodes[1] as PodNetworkNode, nodes);
    assert.equal(r.status, 0, r.stderr);
    const conf = JSON.parse(r.conf) as { plugins: { type: string; ipam?: { ranges: unknown } }[] };
    assert.deepEqual(
      conf.plugins.map((p) => p.type),
      ["ptp", "portmap"],
    );
    assert.deepEqual(conf.plugins[0]?.ipam?.ranges, [[{ subnet: "10.244.1.0/24" }]]);
    assert.deepEqual(r.routes, [
      "route replace 10.244.0.0/24 via 172.18.0.2",
      "route replace 10.244.2.0/24 via 172.18.0.4",
    ]);
    assert.match(r.stdout, /pod network on lab-worker: 10\.244\.1\.0\/24, routes to 2 other nodes/);
  });

  test("dual-stack: a range of each family in the CNI config, a default route and a route per node in each", () => {
    const names = ["lab-control-plane", "lab-worker", "lab-worker2"];
    // Until every node has its second podCIDR, the network waits for it.
    assert.equal(
      podNetworkNodes([dualNode(names[0] ?? "", 0), dualNode(names[1] ?? "", 1, 1)], 2, 2),
      "no podCIDR or address yet: lab-worker",
    );
    const nodes = podNetworkNodes(
      names.map((n, i) => dualNode(n, i)),
      3,
      2,
    ) as PodNetworkNode[];
    const r = run(nodes[1] as PodNetworkNode, nodes);
    assert.equal(r.status, 0, r.stderr);
    const conf = JSON.parse(r.conf) as { plugins: { ipam?: { ranges: unknown; routes: unknown } }[] };
    assert.deepEqual(conf.plugins[0]?.ipam?.ranges, [
      [{ subnet: "10.244.1.0/24" }],
      [{ subnet: "fd00:10:244:1::/64" }],
    ]);
    assert.deepEqual(conf.plugins[0]?.ipam?.routes, [{ dst: "0.0.0.0/0" }, { dst: "::/0" }]);
    assert.deepEqual(r.routes, [
      "route replace 10.244.0.0/24 via 172.18.0.2",
      "route replace fd00:10:244:0::/64 via fc00:f853:ccd:e793::2",
      "route replace 10.244.2.0/24 via 172.18.0.4",
      "route replace fd00:10:244:2::/64 via fc00:f853:ccd:e793::4",
    ]);
  });
});

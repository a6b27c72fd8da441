// The XDP program (--bpf-lb-acceleration) against the real kernel: the node's eth0 is a veth whose peer is the
// client's, and veth runs a native XDP program in its own NAPI poll (the peer needs XDP or GRO only for frames
// redirected or sent back into it, which this program never does). A NodePort reached from the client is
// balanced with the program attached natively; with the tc link detached it still is (TCP and UDP, both
// families, masqueraded), which only the XDP program can have done; REJECT passes to tc, which answers; a second
// start swaps the program inside the link; best-effort leaves a device without native XDP (the bridge) to tc,
// native refuses it; disabled and removal leave no XDP link. Clients time out within a second.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { loadLibbpf } from "../../src/apply/bpf-libbpf.js";
import { detachPinnedLink, removeSockPrograms, tcLinksDir, xdpLinksDir } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import type { TcLoadOptions } from "../../src/apply/bpf-tc.js";
import { XDP_OBJECT_PATH } from "../../src/apply/bpf-xdp.js";
import { realExec } from "../../src/apply/exec.js";
import { serviceFlags } from "../../src/ebpf/layout.js";
import { ipv6Settled, runClient, type TestService, testPinRoot } from "./ebpf-fixture.js";
import {
  externalServiceSteps,
  loadTcIn,
  PeerServers,
  removeTcIn,
  tcTestsUnavailable,
} from "./ebpf-tc-fixture.js";
import { inFamily, Topology } from "./topology.js";

const skip =
  (await tcTestsUnavailable()) ?? (existsSync(XDP_OBJECT_PATH) ? null : `${XDP_OBJECT_PATH} is not built`);
if (skip) console.log(`# skipping eBPF XDP kernel tests: ${skip}`);

const POD = "10.180.0.1";
const NODE_IP = "192.168.0.2";
const NODE_PORT = 30080;
const REJECTED_PORT = 30082;
const TARGET_PORT = 8080;
const FAMILIES = ["IPv4", "IPv6"] as const;

/** A TCP and a UDP NodePort to the pod, and a TCP NodePort without endpoints (REJECT), in `family`. */
function services(family: (typeof FAMILIES)[number]): TestService[] {
  const base = family === "IPv6" ? 100 : 0;
  const backends = [{ id: base + 1, address: inFamily(family, POD), port: TARGET_PORT }];
  const nodePort = {
    family,
    address: inFamily(family, NODE_IP),
    port: NODE_PORT,
    flags: serviceFlags.NODE_PORT,
  };
  return [
    { ...nodePort, proto: "TCP", revNatIndex: base + 1, backends },
    { ...nodePort, proto: "UDP", revNatIndex: base + 2, backends },
    {
      ...nodePort,
      port: REJECTED_PORT,
      proto: "TCP",
      revNatIndex: base + 3,
      flags: serviceFlags.REJECT,
      backends: [],
    },
  ];
}

/** The id of the link pinned at `pin` (bpftool). */
async function linkId(pin: string): Promise<number> {
  const r = await realExec("bpftool", ["-j", "link", "show", "pinned", pin]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { id: number }).id;
}

describe("the XDP program in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  const servers = new PeerServers();
  const pinRoot = testPinRoot("xdp");
  const xdpPin = join(xdpLinksDir(pinRoot), "eth0");
  const load = (options: Omit<TcLoadOptions, "pinRoot">) =>
    loadTcIn((topo as Topology).node, { ...options, pinRoot });
  /** `ip link show` of a node device: "prog/xdp" for a native program, "prog/xdpgeneric" for a generic one. */
  const shown = async (device: string) => {
    const r = await realExec("ip", ["-n", (topo as Topology).node, "-d", "link", "show", device]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const client = (mode: Parameters<typeof runClient>[2], host: string, port: number) =>
    runClient((topo as Topology).client, null, mode, host, port);
  /** Who answers the IPv4 TCP NodePort: the pod's name while a program balances, else the error. */
  const nodePort = async () => {
    const [r] = await client("tcp", NODE_IP, NODE_PORT);
    return r?.answer?.split(" ")[0] ?? r?.error;
  };

  before(async () => {
    topo = await Topology.create(`sy-ebxd${process.pid}`, [POD]);
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, TARGET_PORT);
    await ipv6Settled([topo.client, topo.node, ...topo.pods.map((p) => p.netns)]);
  });

  after(async () => {
    await servers.stop();
    if (topo) await removeTcIn(topo.node, pinRoot).catch(() => {});
    await removeSockPrograms(pinRoot);
    await topo?.destroy();
  });

  test("native: the verifier loads the program, attached natively through a pinned link; a NodePort works", async () => {
    const masquerade = { IPv4: NODE_IP, IPv6: inFamily("IPv6", NODE_IP) };
    const r = await load({ devices: ["eth0"], masquerade, acceleration: "native" });
    assert.deepEqual(r.xdp, { eth0: "attached" });
    assert.ok(existsSync(xdpPin));
    assert.match(await shown("eth0"), /prog\/xdp id \d+/);
    assert.doesNotMatch(await shown("eth0"), /xdpgeneric/);
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      for (const family of FAMILIES) {
        for (const svc of services(family)) await store.write(family, externalServiceSteps(svc));
      }
    } finally {
      store.close();
    }
    assert.equal(await nodePort(), "pod-0");
  });

  test("REJECT passes the XDP program; the tc program answers at once", async () => {
    const [tcp] = await client("tcp", NODE_IP, REJECTED_PORT);
    assert.equal(tcp?.error, "ECONNREFUSED");
  });

  test("the XDP program alone translates: with the tc link detached, new connections and replies still flow", async () => {
    detachPinnedLink(await loadLibbpf(), join(tcLinksDir(pinRoot), "eth0-ingress"));
    for (const family of FAMILIES) {
      const node = inFamily(family, NODE_IP);
      for (let i = 0; i < 3; i++) {
        const [tcp] = await client("tcp", node, NODE_PORT);
        assert.equal(tcp?.answer ?? tcp?.error, `pod-0 ${node}`, family);
      }
      const [udp] = await client("udp-unconnected", node, NODE_PORT);
      assert.equal(udp?.answer ?? udp?.error, `pod-0 ${node}`, family);
      assert.deepEqual(udp?.from, [node, NODE_PORT]);
    }
    const flows = await realExec("ip", [
      "netns",
      "exec",
      (topo as Topology).node,
      "conntrack",
      "-L",
      "-p",
      "tcp",
    ]);
    assert.match(
      flows.stdout,
      new RegExp(
        `dst=${NODE_IP} sport=\\d+ dport=${NODE_PORT} .*src=${POD} dst=${NODE_IP} sport=${TARGET_PORT} `,
      ),
    );
  });

  test("a second start swaps the program inside the same XDP link", async () => {
    const before = await linkId(xdpPin);
    const r = await load({ devices: ["eth0"], acceleration: "native" });
    assert.deepEqual(r.xdp, { eth0: "replaced" });
    assert.equal(await linkId(xdpPin), before);
    assert.equal(await nodePort(), "pod-0");
  });

  test("native refuses a device without native XDP; best-effort leaves it to tc", async () => {
    await assert.rejects(load({ devices: ["eth0", "br0"], acceleration: "native" }), /natively to br0/);
    const r = await load({ devices: ["eth0", "br0"], acceleration: "best-effort" });
    assert.deepEqual(r.xdp, { eth0: "replaced", br0: "unsupported" });
    assert.ok(!existsSync(join(xdpLinksDir(pinRoot), "br0")));
    assert.doesNotMatch(await shown("br0"), /prog\/xdp/);
    assert.equal(await nodePort(), "pod-0");
  });

  test("disabled: the XDP link is detached and tc alone balances", async () => {
    const r = await load({ devices: ["eth0"], acceleration: "disabled" });
    assert.deepEqual(r.xdp, {});
    assert.deepEqual(r.xdpDetached, ["eth0"]);
    assert.ok(!existsSync(xdpLinksDir(pinRoot)));
    assert.doesNotMatch(await shown("eth0"), /prog\/xdp/);
    assert.equal(await nodePort(), "pod-0");
  });

  test("removal detaches the XDP links with the tc links", async () => {
    await load({ devices: ["eth0"], acceleration: "best-effort" });
    assert.match(await shown("eth0"), /prog\/xdp id/);
    const removed = await removeTcIn((topo as Topology).node, pinRoot);
    assert.deepEqual(removed.xdp, ["eth0"]);
    assert.deepEqual(removed.devices, ["eth0"]);
    assert.ok(!existsSync(xdpLinksDir(pinRoot)));
    assert.doesNotMatch(await shown("eth0"), /prog\/xdp/);
    assert.equal(await nodePort(), "ECONNREFUSED");
  });
});

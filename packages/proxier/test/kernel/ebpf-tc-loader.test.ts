// The tc loader against the real kernel, run in the node's namespace: a tcx link per device pinned under the pin
// root, the program swapped inside it on a second start, devices no longer given detached, a missing device
// refused before anything changes, and removal (its own, and removeSockPrograms') leaving no link, pin or table.
// Whether a link still acts is checked from the client: a NodePort is balanced only while the program is there
// (without it the node itself answers, and nothing of its own listens on the port).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeSockPrograms, tcLinksDir } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { NAT_HOOKS_TABLE } from "../../src/apply/bpf-tc-nat-hooks.js";
import { realExec } from "../../src/apply/exec.js";
import { serviceFlags } from "../../src/ebpf/layout.js";
import { runClient, testPinRoot } from "./ebpf-fixture.js";
import { externalServiceSteps, loadTcIn, removeTcIn, tcTestsUnavailable } from "./ebpf-tc-fixture.js";
import { Topology } from "./topology.js";

const skip = await tcTestsUnavailable();
if (skip) console.log(`# skipping eBPF tc loader kernel tests: ${skip}`);

const POD = "10.180.0.1";
const NODE_IP = "192.168.0.2";
const NODE_PORT = 30080;

/** The link pinned at `pin` as bpftool sees it, and its program's name. */
async function pinnedLink(
  pin: string,
): Promise<{ id: number; type: unknown; progId: number; progName: string }> {
  const link = await realExec("bpftool", ["-j", "link", "show", "pinned", pin]);
  assert.equal(link.code, 0, link.stderr);
  const {
    id,
    type,
    prog_id: progId,
  } = JSON.parse(link.stdout) as { id: number; type: unknown; prog_id: number };
  const prog = await realExec("bpftool", ["-j", "prog", "show", "id", String(progId)]);
  assert.equal(prog.code, 0, prog.stderr);
  return { id, type, progId, progName: (JSON.parse(prog.stdout) as { name: string }).name };
}

describe("the tc loader in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  const pinRoot = testPinRoot("tc-loader");
  const pin = (device: string) => join(tcLinksDir(pinRoot), `${device}-ingress`);
  const load = (devices: string[]) => loadTcIn((topo as Topology).node, { devices, pinRoot });
  /** What the client gets from the NodePort: a pod's answer while the program acts, ECONNREFUSED without it. */
  const nodePort = async () => {
    const [r] = await runClient((topo as Topology).client, null, "tcp", NODE_IP, NODE_PORT);
    return r?.answer ?? r?.error;
  };

  before(async () => {
    topo = await Topology.create(`sy-ebtl${process.pid}`, [POD]);
  });

  after(async () => {
    if (topo) await removeTcIn(topo.node, pinRoot).catch(() => {});
    await removeSockPrograms(pinRoot);
    await topo?.destroy();
  });

  test("a first start attaches to the device through a pinned tcx link and turns the NAT hooks on", async () => {
    assert.deepEqual((await load(["eth0"])).devices, { eth0: "attached" });
    const link = await pinnedLink(pin("eth0"));
    assert.equal(link.progName, "tc_ingress");
    const table = await realExec("ip", [
      "netns",
      "exec",
      (topo as Topology).node,
      "nft",
      "list",
      "table",
      "inet",
      NAT_HOOKS_TABLE,
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /type nat hook postrouting/);
    assert.match(table.stdout, /ct status dnat counter/);
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      const backends = [{ id: 1, address: POD, port: 80 }];
      const svc = {
        family: "IPv4",
        address: NODE_IP,
        port: NODE_PORT,
        proto: "TCP",
        revNatIndex: 1,
      } as const;
      await store.write("IPv4", externalServiceSteps({ ...svc, flags: serviceFlags.NODE_PORT, backends }));
    } finally {
      store.close();
    }
    assert.equal(await nodePort(), "pod-0");
  });

  test("a second start swaps the program inside the same link", async () => {
    const before = await pinnedLink(pin("eth0"));
    assert.deepEqual((await load(["eth0"])).devices, { eth0: "replaced" });
    const now = await pinnedLink(pin("eth0"));
    assert.equal(now.id, before.id);
    assert.notEqual(now.progId, before.progId);
    assert.equal(await nodePort(), "pod-0");
  });

  test("a start without a device detaches it", async () => {
    const r = await load(["br0"]);
    assert.deepEqual(r.devices, { br0: "attached" });
    assert.deepEqual(r.detached, ["eth0"]);
    assert.ok(!existsSync(pin("eth0")));
    assert.equal(await nodePort(), "ECONNREFUSED");
  });

  test("a missing device is refused before anything changes", async () => {
    await assert.rejects(load(["eth0", "nope0"]), /no device nope0/);
    assert.ok(existsSync(pin("br0")));
    assert.ok(!existsSync(pin("eth0")));
  });

  test("removal detaches every link and deletes the NAT hooks' table", async () => {
    assert.deepEqual(await removeTcIn((topo as Topology).node, pinRoot), {
      devices: ["br0"],
      xdp: [],
      natHooks: true,
    });
    assert.ok(!existsSync(tcLinksDir(pinRoot)));
    const table = await realExec("ip", ["netns", "exec", (topo as Topology).node, "nft", "list", "tables"]);
    assert.doesNotMatch(table.stdout, new RegExp(NAT_HOOKS_TABLE));
  });

  test("removeSockPrograms detaches a tc link too, with the whole pin root", async () => {
    await load(["eth0"]);
    assert.equal(await nodePort(), "pod-0");
    const removed = await removeSockPrograms(pinRoot);
    assert.ok(removed.links.includes("eth0-ingress"), removed.links.join(", "));
    assert.ok(!existsSync(pinRoot));
    assert.equal(await nodePort(), "ECONNREFUSED");
  });
});

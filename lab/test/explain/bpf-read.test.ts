// The node reads of ebpf mode against the real kernel: the proxier's programs loaded into a cgroup and pin root of
// this test's own, the fixture cluster's first sync written into the pinned maps, then read back as explain, lb
// list and trace read a node: the same contents as the fake holds, a family not pinned is absent, a second sync
// is seen by the next read, and a proxy that does not answer is still known to run ebpf mode by its pins. Needs
// root, libbpf.so.1, a cgroup2 mount and the proxier's built object; everything made is removed after.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { contentsText, KernelBPFMapStore, loadSockPrograms, removeSockPrograms } from "@switchyard/proxier";
import { decodeMaps } from "../../src/explain/bpf-maps.js";
import { nodeProxyMode, nodeReader, readPinnedMaps } from "../../src/explain/read-node.js";
import { NodePoller } from "../../src/trace/rule-poll.js";
import { NODE, slices } from "./fixture-cluster.js";
import { ebpfSync, renderedEBPF } from "./render-fixture.js";

const name = `sy-lab-bpf-read-${process.pid}`;
const pinRoot = `/sys/fs/bpf/${name}`;

/** The cgroup2 mount, from this process's mount table. */
function cgroup2Mount(): string | undefined {
  const line = readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .find((l) => l.split(" ")[2] === "cgroup2");
  return line?.split(" ")[1];
}

async function unavailable(): Promise<string | false> {
  if (process.getuid?.() !== 0) return "needs root";
  if (!cgroup2Mount()) return "no cgroup2 mount";
  if (!existsSync("/sys/fs/bpf")) return "no /sys/fs/bpf";
  try {
    (await KernelBPFMapStore.open(pinRoot)).close();
    return false;
  } catch (err) {
    return (err as Error).message;
  }
}

const skip = await unavailable();
if (skip) console.log(`# skipping the lab's eBPF map reads: ${skip}`);

describe("reading a node's pinned maps", { skip }, () => {
  const cgroupPath = join(cgroup2Mount() ?? "/sys/fs/cgroup", name);
  const first = ebpfSync();

  before(async () => {
    mkdirSync(cgroupPath);
    const sizes = { services: 256, backends: 256, revNat: 256 };
    await loadSockPrograms({ cgroupPath, pinRoot, families: ["IPv4"], maxEntries: sizes });
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      await store.write("IPv4", first.steps);
    } finally {
      store.close();
    }
  });
  after(async () => {
    await removeSockPrograms(pinRoot);
    if (existsSync(cgroupPath)) rmdirSync(cgroupPath);
  });

  test("the maps read back hold what the fake holds after the same sync", async () => {
    const read = await readPinnedMaps(pinRoot, "IPv4");
    if (!read) return assert.fail("no IPv4 maps read");
    const { contents, problems } = decodeMaps(read);
    assert.deepEqual(problems, []);
    assert.equal(contentsText(contents), contentsText(renderedEBPF().contents("IPv4")));
  });

  test("a family whose maps are not pinned, or a root with nothing pinned, reads as absent", async () => {
    assert.equal(await readPinnedMaps(pinRoot, "IPv6"), undefined);
    assert.equal(await readPinnedMaps(`${pinRoot}-none`, "IPv4"), undefined);
  });

  test("a proxy that does not answer /proxyMode runs ebpf mode when its maps are pinned", async () => {
    const silent = async () => {
      throw new Error("nothing listens");
    };
    assert.equal(await nodeProxyMode(silent, { run: [], bpfRoot: pinRoot }, "IPv4"), "ebpf");
  });

  test("trace's reads through the kernel see the next sync's new endpoint", async () => {
    const reader = await nodeReader(async () => "", { run: [], bpfRoot: pinRoot }, "ebpf", "IPv4");
    assert.equal(reader.source, `maps pinned under ${pinRoot}`);
    const node = { name: NODE.name, zone: NODE.zone, ip: NODE.ip, run: [] };
    const poller = new NodePoller(node, reader, [NODE.ip]);
    const target = { ip: "10.96.0.60", port: 80, protocol: "tcp" as const };
    await poller.readOnce(target);
    const grown = slices.map((s) =>
      s.metadata?.labels?.["kubernetes.io/service-name"] === "web"
        ? { ...s, endpoints: [...(s.endpoints ?? []), { addresses: ["10.244.2.16"], nodeName: "node-2" }] }
        : s,
    );
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      await store.write("IPv4", ebpfSync(grown, first.state).steps);
    } finally {
      store.close();
    }
    await poller.readOnce(target);
    assert.deepEqual(
      poller.reads.map((r) => [...r.reaches].sort()),
      [
        ["10.244.1.6", "10.244.2.6", "10.244.3.6"],
        ["10.244.1.6", "10.244.2.16", "10.244.2.6", "10.244.3.6"],
      ],
    );
  });
});

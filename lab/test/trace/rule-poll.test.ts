// trace's reads of a node in ebpf mode: each read is the node's maps (here FakeBPFMaps, dumped as its pins would
// be) traced for a connection from the node to the ClusterIP, so an endpoint landing in the maps shows in the
// first read after it, at that read's time, as a change of rules does.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeBPFMaps } from "@switchyard/proxier/trace";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { NodeReader } from "../../src/explain/read-node.js";
import { ChangeFollower, programmedAt } from "../../src/trace/follow.js";
import { NodePoller } from "../../src/trace/rule-poll.js";
import { formatChange } from "../../src/trace/timeline.js";
import { NODE, slices, web } from "../explain/fixture-cluster.js";
import { dumpsOf, ebpfSync } from "../explain/render-fixture.js";

const target = { ip: "10.96.0.60", port: 80, protocol: "tcp" as const };
const labNode = { name: NODE.name, zone: NODE.zone, ip: NODE.ip, run: ["true"] };

/** The fixture's slices with web's gaining an endpoint on node-2. */
function withNewEndpoint(): EndpointSlice[] {
  return slices.map((s) => {
    if (s.metadata?.labels?.["kubernetes.io/service-name"] !== "web") return s;
    const added: Endpoint = { addresses: ["10.244.2.16"], conditions: { ready: true }, nodeName: "node-2" };
    return { ...s, endpoints: [...(s.endpoints ?? []), added] };
  });
}

describe("trace's reads of an ebpf node", () => {
  test("a new endpoint is seen at the first read of the maps after the sync that wrote it", async () => {
    const fake = new FakeBPFMaps();
    const first = ebpfSync();
    fake.writeSync("IPv4", first.steps);
    const reader: NodeReader = {
      mode: "ebpf",
      source: "maps pinned under /test",
      read: async () => ({ mode: "ebpf", maps: dumpsOf(fake) }),
    };
    let clock = 1000;
    const poller = new NodePoller(labNode, reader, [NODE.ip, "127.0.0.1"], () => clock);
    assert.equal(poller.mode, "ebpf");

    await poller.readOnce(target);
    clock = 1500;
    fake.writeSync("IPv4", ebpfSync(withNewEndpoint(), first.state).steps);
    await poller.readOnce(target);

    assert.deepEqual(poller.problems, []);
    assert.deepEqual(
      poller.reads.map((r) => [r.at, [...r.reaches].sort()]),
      [
        [1000, ["10.244.1.6", "10.244.2.6", "10.244.3.6"]],
        [1500, ["10.244.1.6", "10.244.2.16", "10.244.2.6", "10.244.3.6"]],
      ],
    );
    assert.equal(programmedAt(poller.reads, "10.244.2.16", "added", 1200), 1500);
    assert.equal(poller.intervalMs, 500);
  });

  test("the timeline says maps for a node in ebpf mode", () => {
    const port = web.service.spec?.ports?.[0];
    if (!port) return assert.fail("no port");
    const nodes = [
      { name: "node-1", labels: { "topology.kubernetes.io/zone": "zone-a" }, mode: "ebpf" as const },
    ];
    const f = new ChangeFollower(web.service, port, nodes, "IPv4", structuredClone(web.slices));
    const slice = withNewEndpoint().find((s) => s.metadata?.name === "web-abcde");
    if (!slice) return assert.fail("no slice");
    slice.metadata = { ...slice.metadata, resourceVersion: "10" };
    const [made] = f.write({ at: 1100, type: "MODIFIED", slice }, "seen on the watch", () => undefined);
    if (!made) return assert.fail("no change");
    f.settle(() => [{ at: 1500, reaches: new Set(["10.244.2.16"]) }]);
    assert.match(formatChange(made, 1, 1, 60_000), /node-1: maps send the ClusterIP to it$/m);
  });
});

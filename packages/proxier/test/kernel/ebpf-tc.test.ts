// Traffic from outside the node through the tc program, for real: the topology's client namespace is the outside
// world, the node's eth0 carries the program (a tcx link the loader pins), and the pods' servers answer with their
// name and the address they saw the client come from, so each answer tells which backend was chosen and whether
// the node masqueraded. Service entries of scope EXTERNAL are written by hand with the codecs, as the renderer
// will write them. Nothing here runs inside the socket programs' cgroup: these are plain clients from outside.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { realExec } from "../../src/apply/exec.js";
import { serviceFlags } from "../../src/ebpf/layout.js";
import {
  ebpfTestsUnavailable,
  ipv6Settled,
  runClient,
  type TestService,
  testPinRoot,
} from "./ebpf-fixture.js";
import {
  externalServiceSteps,
  loadTcIn,
  PeerServers,
  removeTcIn,
  tcTestsUnavailable,
} from "./ebpf-tc-fixture.js";
import { CLIENT_IP, inFamily, Topology } from "./topology.js";

const skip = await tcTestsUnavailable();
if (skip) console.log(`# skipping eBPF tc kernel tests: ${skip}`);

const POD_A = "10.180.0.1";
const POD_B = "10.180.0.2";
const NODE_IP = "192.168.0.2";
/** An external IP (or load-balancer VIP) the client routes to the node (the topology routes 172.30/16 there). */
const VIP = "172.30.0.100";
const TARGET_PORT = 8080;
/** A server of the node itself, reached with no service in the way. */
const NODE_SERVER_PORT = 9090;

/** Each frontend: its address, port, protocol, flags and reverse NAT index (IPv6 adds 100). */
const FRONTENDS = {
  nodePort: { address: NODE_IP, port: 30080, proto: "TCP", flags: serviceFlags.NODE_PORT, revNat: 1 },
  nodePortUdp: { address: NODE_IP, port: 30080, proto: "UDP", flags: serviceFlags.NODE_PORT, revNat: 2 },
  local: {
    address: NODE_IP,
    port: 30081,
    proto: "TCP",
    flags: serviceFlags.NODE_PORT | serviceFlags.EXTERNAL_LOCAL,
    revNat: 3,
  },
  externalIP: { address: VIP, port: 80, proto: "TCP", flags: serviceFlags.EXTERNAL_IP, revNat: 4 },
  rejected: { address: NODE_IP, port: 30082, proto: "TCP", flags: serviceFlags.REJECT, revNat: 5 },
  rejectedUdp: { address: NODE_IP, port: 30082, proto: "UDP", flags: serviceFlags.REJECT, revNat: 6 },
  dropped: { address: NODE_IP, port: 30083, proto: "TCP", flags: serviceFlags.DROP, revNat: 7 },
  /** SOURCE_RANGES with no range written (ebpf-ranges.test.ts writes some): the lookup misses for everyone. */
  sourceRanges: {
    address: VIP,
    port: 443,
    proto: "TCP",
    flags: serviceFlags.LOAD_BALANCER | serviceFlags.SOURCE_RANGES,
    revNat: 9,
  },
  affine: {
    address: NODE_IP,
    port: 30084,
    proto: "TCP",
    flags: serviceFlags.NODE_PORT | serviceFlags.AFFINITY,
    revNat: 8,
  },
} as const;

function services(family: IPFamily): TestService[] {
  const at = (ip: string) => inFamily(family, ip);
  const base = family === "IPv6" ? 100 : 0;
  const pods = [
    { id: base + 1, address: at(POD_A), port: TARGET_PORT },
    { id: base + 2, address: at(POD_B), port: TARGET_PORT },
  ];
  return Object.values(FRONTENDS).map((f) => ({
    family,
    address: at(f.address),
    port: f.port,
    proto: f.proto,
    revNatIndex: base + f.revNat,
    flags: f.flags,
    affinityTimeout: f.flags & serviceFlags.AFFINITY ? 600 : 0,
    backends: f.flags & (serviceFlags.REJECT | serviceFlags.DROP) ? [] : pods,
  }));
}

/**
 * Three connections from one source port, one after the other: the server closes first, so each connect meets
 * the previous flow's conntrack entry in TIME_WAIT, where a SYN makes conntrack start an entry of its own.
 * The client closes last, so its own socket stays in LAST_ACK until the server's final ACK is processed; on a
 * busy machine that can come after the next connect, which the client's stack refuses (EADDRNOTAVAIL: the
 * four-tuple is still in use) before any packet leaves. Such a connect is tried again; nothing reached the
 * datapath.
 */
const SAME_PORT_TWICE = String.raw`
import errno, json, random, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
source = random.randint(20000, 30000)
fam = socket.AF_INET6 if ":" in host else socket.AF_INET

def connected():
    for _ in range(50):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(1.0)
        s.bind(("", source))
        try:
            s.connect((host, port))
            return s
        except OSError as e:
            s.close()
            if e.errno != errno.EADDRNOTAVAIL: raise
            time.sleep(0.02)
    raise OSError(errno.EADDRNOTAVAIL, "the previous connection's four-tuple stayed in use for 1 s")

answers = []
for _ in range(3):
    s = None
    try:
        s = connected()
        data = b""
        while True:
            chunk = s.recv(100)
            if not chunk: break
            data += chunk
        answers.append(data.decode())
    except OSError as e:
        answers.append(type(e).__name__ + " " + str(e))
    if s: s.close()
print(json.dumps(answers))
`;

describe("the tc program on the node's external device", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  let store: KernelBPFMapStore | undefined;
  const servers = new PeerServers();
  const pinRoot = testPinRoot("tc");

  before(async () => {
    topo = await Topology.create(`sy-ebtc${process.pid}`, [POD_A, POD_B]);
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, TARGET_PORT);
    await servers.start(topo.node, "node", NODE_SERVER_PORT);
    await ipv6Settled([topo.client, topo.node, ...topo.pods.map((p) => p.netns)]);
    const loaded = await loadTcIn(topo.node, {
      devices: ["eth0"],
      masquerade: { IPv4: NODE_IP, IPv6: inFamily("IPv6", NODE_IP) },
      pinRoot,
      maxEntries: { services: 256, backends: 256 },
    });
    assert.deepEqual(loaded.devices, { eth0: "attached" });
    store = await KernelBPFMapStore.open(pinRoot);
    for (const family of ["IPv4", "IPv6"] as const) {
      for (const svc of services(family)) await store.write(family, externalServiceSteps(svc));
    }
  });

  after(async () => {
    store?.close();
    await servers.stop();
    if (topo) await removeTcIn(topo.node, pinRoot).catch(() => {});
    await removeSockPrograms(pinRoot);
    await topo?.destroy();
  });

  const client = (mode: Parameters<typeof runClient>[2], host: string, port: number, count = 1) =>
    runClient((topo as Topology).client, null, mode, host, port, count);

  /** "pod-N <address>" split; the error code when there was no answer. */
  const answers = (results: { answer?: string; error?: string }[]) =>
    results.map((r) => {
      const [name, seen] = (r.answer ?? `error ${r.error}`).split(" ");
      return { name, seen };
    });

  for (const family of ["IPv4", "IPv6"] as const) {
    const at = (ip: string) => inFamily(family, ip);

    test(`${family}: a NodePort reaches both backends, which see the node's address (masquerade)`, async () => {
      const seen = answers(await client("tcp", at(NODE_IP), FRONTENDS.nodePort.port, 40));
      assert.deepEqual([...new Set(seen.map((a) => a.name))].sort(), ["pod-0", "pod-1"]);
      for (const a of seen) assert.equal(a.seen, at(NODE_IP));
    });

    test(`${family}: with EXTERNAL_LOCAL the backend sees the client's own address`, async () => {
      const seen = answers(await client("tcp", at(NODE_IP), FRONTENDS.local.port, 4));
      for (const a of seen) {
        assert.match(String(a.name), /^pod-[01]$/);
        assert.equal(a.seen, at(CLIENT_IP));
      }
    });

    test(`${family}: an external IP routed to the node is balanced`, async () => {
      const seen = answers(await client("tcp", at(VIP), FRONTENDS.externalIP.port, 4));
      for (const a of seen) {
        assert.match(String(a.name), /^pod-[01]$/);
        assert.equal(a.seen, at(NODE_IP));
      }
    });

    test(`${family}: UDP through a NodePort; the answer comes from the node's address and the NodePort`, async () => {
      const results = await client("udp-unconnected", at(NODE_IP), FRONTENDS.nodePortUdp.port, 4);
      for (const r of results) {
        assert.match(r.answer ?? String(r.error), new RegExp(`^pod-[01] ${at(NODE_IP)}$`));
        assert.deepEqual(r.from, [at(NODE_IP), FRONTENDS.nodePortUdp.port]);
      }
    });

    test(`${family}: REJECT is answered at once (TCP: a reset, UDP: port unreachable), both ECONNREFUSED`, async () => {
      const [tcp] = await client("tcp", at(NODE_IP), FRONTENDS.rejected.port);
      assert.equal(tcp?.error, "ECONNREFUSED");
      const [udp] = await client("udp-connected", at(NODE_IP), FRONTENDS.rejectedUdp.port);
      assert.equal(udp?.error, "ECONNREFUSED");
    });

    test(`${family}: DROP drops (the client's 1 s timeout runs out)`, async () => {
      const [r] = await client("tcp", at(NODE_IP), FRONTENDS.dropped.port);
      assert.equal(r?.error, "ETIMEDOUT");
    });

    test(`${family}: a load balancer whose source ranges admit nobody drops, though it has backends`, async () => {
      const [r] = await client("tcp", at(VIP), FRONTENDS.sourceRanges.port);
      assert.equal(r?.error, "ETIMEDOUT");
    });

    test(`${family}: a packet to no frontend passes untouched (the node's own server sees the client)`, async () => {
      const seen = answers(await client("tcp", at(NODE_IP), NODE_SERVER_PORT));
      assert.deepEqual(seen, [{ name: "node", seen: at(CLIENT_IP) }]);
    });

    test(`${family}: a client port reused at once (its flow's entry in TIME_WAIT) is translated anew`, async () => {
      const r = await realExec("ip", [
        "netns",
        "exec",
        (topo as Topology).client,
        "python3",
        "-c",
        SAME_PORT_TWICE,
        at(NODE_IP),
        String(FRONTENDS.nodePort.port),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const answers = JSON.parse(r.stdout) as string[];
      assert.equal(answers.length, 3);
      for (const a of answers) assert.match(a, new RegExp(`^pod-[01] ${at(NODE_IP)}$`));
    });

    test(`${family}: ClientIP affinity keeps one backend for the client's address`, async () => {
      const names = new Set(
        answers(await client("tcp", at(NODE_IP), FRONTENDS.affine.port, 20)).map((a) => a.name),
      );
      assert.equal(names.size, 1, [...names].join(", "));
      assert.match(String([...names][0]), /^pod-[01]$/);
    });

    test(`${family}: the kernel's conntrack lists the flows, translated`, async () => {
      const r = await realExec("ip", [
        "netns",
        "exec",
        (topo as Topology).node,
        "conntrack",
        "-L",
        "-f",
        family === "IPv6" ? "ipv6" : "ipv4",
        "-p",
        "tcp",
        "--dport",
        String(FRONTENDS.nodePort.port),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const flows = r.stdout.trim().split("\n").filter(Boolean);
      assert.ok(flows.length >= 40, `${flows.length} flows`);
      for (const flow of flows) {
        assert.match(flow, new RegExp(`src=${at(CLIENT_IP)} dst=${at(NODE_IP)} sport=\\d+ dport=30080 `));
        assert.match(
          flow,
          new RegExp(`src=(${at(POD_A)}|${at(POD_B)}) dst=${at(NODE_IP)} sport=${TARGET_PORT} `),
        );
      }
    });

    test(`${family}: 500 new connections through the NodePort, one after the other, all answered`, async () => {
      const started = performance.now();
      const results = await client("tcp", at(NODE_IP), FRONTENDS.nodePort.port, 500);
      const seconds = (performance.now() - started) / 1000;
      const failed = results.filter((r) => !/^pod-[01] /.test(r.answer ?? ""));
      assert.deepEqual(failed, []);
      console.log(
        `# ${family}: 500 connections through the tc program in ${seconds.toFixed(2)} s (client included)`,
      );
    });
  }
});

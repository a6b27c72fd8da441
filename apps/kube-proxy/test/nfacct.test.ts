// iptables mode's two nfacct counters on the real kernel, with real packets: connections to a NodePort on
// 127.0.0.1 from the node, and TCP segments conntrack calls INVALID (SYN and FIN together) forwarded through the
// node. The proxy creates the kernel's accounting objects, its rules count into them, and /metrics shows what the
// kernel counted. kube-proxy v1.37.2's binary, when built, runs the same traffic and must count the same.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import {
  missingControlPlane,
  resolveBinary,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import {
  CLIENT_IP,
  CLUSTER_CIDR,
  missingKernelTools,
  Net,
  NODE_IP,
  names,
  startProxy,
} from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";

const skip = missingKernelTools(["nfacct", "python3", "curl", "iptables-nft-save"]) ?? missingControlPlane();
const upstream = resolveBinary("kube-proxy").path;
const POD_IP = "10.180.0.1";

// Sends `count` TCP segments with SYN and FIN both set (a combination conntrack marks INVALID) from a raw
// socket; the kernel adds the IP header, the script computes the TCP checksum over the pseudo-header.
const SYN_FIN = `
import socket, struct, sys
src, dst, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def checksum(b):
    total = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
for i in range(count):
    tcp = struct.pack("!HHIIBBHHH", 41000 + i, port, 1000, 0, 5 << 4, 0x03, 64240, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    s.sendto(tcp, (dst, 0))
`;

const INVALID = "kubeproxy_iptables_ct_state_invalid_dropped_packets_total";
const LOCALHOST = "kubeproxy_iptables_localhost_nodeports_accepted_packets_total";

describe("iptables mode's nfacct counters on the kernel", { skip, timeout: 300_000 }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let args: string[];
  let nodePort = 0;
  const scrape = () => net.in(net.node, ["curl", "-s", "--max-time", "2", "http://127.0.0.1:10249/metrics"]);
  const sample = (text: string, name: string) => {
    const m = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
    return m?.[1] === undefined ? undefined : Number(m[1]);
  };
  /** What the kernel's object holds, read with nfacct itself. */
  const kernelCount = (object: string) =>
    Number(/pkts = (\d+)/.exec(net.in(net.node, ["nfacct", "get", object]))?.[1]);

  before(async () => {
    cp = await startControlPlane();
    api = apiClient(cp.server, cp.stateDir);
    net = new Net(`synf${process.pid % 1000}`, 216);
    await net.build([POD_IP]);
    // The client reaches pods through the node, so its segments cross the node's FORWARD chain.
    net.in(net.client, ["ip", "route", "add", "10.180.0.0/24", "via", NODE_IP]);
    const kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
    await createNode(api, "node1", NODE_IP);
    const svc = await createService(api, "default", "web", {
      type: "NodePort",
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    });
    nodePort = svc.spec?.ports?.[0]?.nodePort ?? 0;
    await createSlice(api, "default", "web", { [POD_IP]: "node1" });
    args = [
      `--kubeconfig=${kubeconfig}`,
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--proxy-mode=iptables",
    ];
  });
  after(async () => {
    await net?.destroy();
    await cp?.stop();
  });

  /** Sends the traffic and returns how much each metric grew, as the running proxy's /metrics shows it. */
  async function countTraffic(): Promise<{ localhost: number; invalid: number }> {
    const before = scrape();
    const answers = await net.probe("127.0.0.1", nodePort, 3, net.node);
    assert.deepEqual(names(answers), new Set(["pod-0"]), answers.join(","));
    net.in(net.client, ["python3", "-c", SYN_FIN, CLIENT_IP, POD_IP, "80", "5"]);
    const now = scrape();
    assert.equal(
      sample(now, LOCALHOST),
      kernelCount("localhost_nps_accepted_pkts"),
      "/metrics shows the kernel's",
    );
    assert.equal(sample(now, INVALID), kernelCount("ct_state_invalid_dropped_pkts"));
    const grew = (name: string) => (sample(now, name) ?? Number.NaN) - (sample(before, name) ?? Number.NaN);
    return { localhost: grew(LOCALHOST), invalid: grew(INVALID) };
  }

  const synced = async () =>
    /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} [1-9]/m.test(scrape()) ||
    undefined;

  test("ours creates both objects, its rules count into them, /metrics reads them", async () => {
    const proxy = startProxy(net.node, args);
    try {
      await eventually("our first sync", async () => {
        if (proxy.child.exitCode !== null) throw new Error(`proxy exited:\n${proxy.log()}`);
        return synced();
      });
      assert.deepEqual(
        net
          .in(net.node, ["nfacct", "list"])
          .split("\n")
          .map((l) => / = (\S+);$/.exec(l)?.[1])
          .filter(Boolean)
          .sort(),
        ["ct_state_invalid_dropped_pkts", "localhost_nps_accepted_pkts"],
      );
      // One nat-table match per connection (its first packet); every SYN+FIN segment is dropped and counted.
      assert.deepEqual(await countTraffic(), { localhost: 3, invalid: 5 });
    } finally {
      assert.equal(await proxy.stop(), 0, proxy.log());
    }
  });

  test("kube-proxy v1.37.2 counts the same traffic the same", {
    skip: upstream ? undefined : "no kube-proxy binary: run npx switchyard-lab upstream build",
  }, async () => {
    const child: ChildProcess = spawn("ip", ["netns", "exec", net.node, upstream ?? "", ...args], {
      stdio: "ignore",
    });
    try {
      await eventually("upstream's first sync", synced);
      assert.deepEqual(await countTraffic(), { localhost: 3, invalid: 5 });
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
  });
});

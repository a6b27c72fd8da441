// The three programs while part of the control plane is gone, on the real etcd and kube-apiserver, with CoreDNS
// 1.14.7 beside switchyard-dns on the same kubeconfig and Corefile. The slice controller writes the slices of Pods
// whose addresses live in a netns lab (apps/kube-proxy/src/testing/netns.ts); switchyard-proxy (nftables) programs them
// on the node and DNS answers their names, so one chain runs from the Pods to a connection.
//  - etcd killed for 30 s, kube-apiserver left up: the apiserver fails /readyz and every write but keeps the
//    watches it serves open (none of the programs logs a failure), so they see silence. Both DNS servers keep
//    answering what they know, identically; traffic keeps flowing through the proxy's rules; the slice controller
//    keeps running and rewrites nothing. After etcd is back a new Service and a new Pod are sliced, programmed and
//    answered.
//  - kube-apiserver killed: watches break and reconnecting is refused. Both DNS servers answer from their caches
//    (client-go keeps an informer's cache through failed watches; so does ours), identically, /ready says the
//    same on both, and after the restart both follow a change.
//  - kube-apiserver blackholed for 60 s (an nftables table drops its port's packets both ways on loopback, so
//    established connections go silent and new ones get no SYN-ACK): two switchyard slice controllers elected on
//    one Lease replace the un-elected one first. Both DNS servers keep answering, identically; traffic keeps
//    flowing; the leader, unable to renew within its renew deadline, stops leading and exits 1 as
//    kube-controller-manager does; the standby takes the Lease only after the lift, the leader long gone, and the
//    test restarts the exited one after the lift as a kubelet would (it stays standby). Every sync each controller
//    logs lies inside its own time as leader. After the lift a new Service and a deleted Pod are sliced once (one
//    slice per Service), programmed and answered.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { differentialSkip, type Pair, startPair } from "@switchyard/cluster-dns/testing";
import { eventually } from "@switchyard/kube/testing";
import {
  CLUSTER_CIDR,
  createNode,
  missingKernelTools,
  Net,
  NODE_IP,
  names,
  type ProxyRun,
  startProxy,
} from "@switchyard/kube-proxy-app/testing";
import {
  Api,
  createNamespace,
  createPod,
  createService,
  deletePod,
  listSlices,
  missingControlPlane,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import { connectOutcome, NftBlackhole } from "./nft-blackhole.js";

const SLICE_CONTROLLER = fileURLToPath(
  new URL("../../apps/slice-controller/bin/switchyard-slice-controller.js", import.meta.url),
);
const NS = "outage";
const ZONE = "cluster.local";
const ETCD_DOWN_MS = 30_000;
const BLACKHOLE_MS = 60_000;
const POD_IPS = ["10.180.0.1", "10.180.0.2", "10.180.0.3"];

const skip = missingKernelTools(["nft"]) ?? missingControlPlane() ?? differentialSkip();

const corefile = (kubeconfig: string) => `.:{{PORT}} {
    ready 127.0.0.1:{{FREE1}}
    kubernetes ${ZONE} {
        kubeconfig ${kubeconfig}
    }
}
`;

const fqdn = (service: string) => `${service}.${NS}.svc.${ZONE}`;

/** A dig answer with its records in a fixed order: the two servers may list an RRset's records differently. */
const sorted = (answer: string) => answer.split("\n").sort().join("\n");
const withoutSerial = (answer: string) => sorted(answer.replace(/(IN SOA \S+ \S+) \d+/g, "$1 SERIAL"));

interface LogEntry {
  ts: string;
  msg: string;
  [field: string]: unknown;
}

interface SliceController {
  child: ChildProcess;
  log: () => string;
  entries: () => LogEntry[];
  /** When the test saw the process end, and how. */
  exited: Promise<{ code: number | null; at: number }>;
}

/** Without leader election by default: renewing a Lease needs etcd, and the etcd outage is about what the program
 * keeps, not about what a leader does when it cannot renew (the blackhole phase's subject). */
function startSliceController(
  kubeconfig: string,
  args: readonly string[] = ["--leader-elect=false"],
): SliceController {
  const child = spawn(
    process.execPath,
    [SLICE_CONTROLLER, `--kubeconfig=${kubeconfig}`, "--metrics-bind-address=0", ...args],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let text = "";
  child.stderr?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on("exit", (code) => resolve({ code, at: Date.now() })),
  );
  const entries = () =>
    text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogEntry);
  return { child, log: () => text, entries, exited };
}

/** Two elected controllers on one Lease with kube-controller-manager's default timings; -v=4 logs every sync. */
const ELECTED = [
  "--leader-elect=true",
  "--leader-elect-lease-duration=15s",
  "--leader-elect-renew-deadline=10s",
  "--leader-elect-retry-period=2s",
  "-v=4",
];

const timesOf = (c: SliceController, msg: string) =>
  c
    .entries()
    .filter((e) => e.msg === msg)
    .map((e) => Date.parse(e.ts));
const identityOf = (c: SliceController) => c.entries().find((e) => e.msg === "started")?.identity;
/** Whether c has been told `leader` holds the Lease. */
const follows = (c: SliceController, leader: SliceController) =>
  c.entries().some((e) => e.msg === "new leader elected" && e.leader === identityOf(leader));

describe("an etcd and a kube-apiserver outage, side by side with CoreDNS v1.14.7", { skip }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let proxy: ProxyRun;
  let pair: Pair;
  let controller: SliceController;
  const elected: SliceController[] = [];
  const clusterIPs = new Map<string, string>();

  /**
   * Each query's answers from both servers, which must agree but for the SOA serial: that is the time each one
   * last saw a change, a second apart now and then.
   */
  const answers = async (queries: readonly (readonly string[])[]) => {
    const out: string[] = [];
    for (const query of queries) {
      const { ours, coredns } = await pair.dig(...query);
      assert.equal(withoutSerial(ours), withoutSerial(coredns), `${query.join(" ")}: ours against CoreDNS`);
      out.push(`ours:\n${sorted(ours)}\nCoreDNS:\n${sorted(coredns)}`);
    }
    return out;
  };
  const readyStatus = async (server: Pair["ours"]) =>
    (await fetch(`http://127.0.0.1:${server.free.get("{{FREE1}}")}/ready`)).status;
  /** Whether connections reach exactly these pods; ten per pod, so chance misses one of two once in ~500 000. */
  const serves = async (service: string, pods: readonly string[]) => {
    const got = [...names(await net.probe(clusterIPs.get(service) ?? "", 80, 10 * pods.length))].sort();
    return got.join(",") === pods.join(",") ? true : undefined;
  };
  const endpointsOf = async (service: string) =>
    (await listSlices(api, NS, service)).slices
      .flatMap((s) => s.endpoints.flatMap((e) => e.addresses))
      .sort();
  const addService = async (name: string, headless = false) => {
    const s = await createService(api, NS, name, {
      selector: { app: "web" },
      ports: [{ name: "http", port: 80, targetPort: 80, protocol: "TCP" }],
      ...(headless ? { clusterIP: "None" } : {}),
    });
    clusterIPs.set(name, s.spec?.clusterIP ?? "");
  };
  const addPod = (i: number) =>
    createPod(api, NS, { name: `web-${i}`, node: "node1", ips: [POD_IPS[i] ?? ""] });

  before(async () => {
    cp = await startControlPlane();
    api = new Api(cp.server, cp.stateDir);
    net = new Net(`syo${process.pid % 10000}`, 222);
    await net.build(POD_IPS);
    await createNode(api, "node1", NODE_IP);
    await createNamespace(api, NS);
    await addService("web");
    await addService("db", true);
    await addPod(0);
    await addPod(1);
    controller = startSliceController(cp.kubeconfigPath);
    proxy = startProxy(net.node, [
      `--kubeconfig=${await net.kubeconfigFor(cp.kubeconfigPath, cp.server)}`,
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--nftables-min-sync-period=100ms",
    ]);
    pair = await startPair(corefile(cp.kubeconfigPath));
    // What each step saw last, so that a start that never gets there says which part did not.
    const seen: Record<string, string> = {};
    await eventually(
      "the Pods sliced, programmed and answered",
      async () => {
        seen.slices = (await endpointsOf("web")).join();
        if (seen.slices !== "10.180.0.1,10.180.0.2") return undefined;
        const [db] = await answers([[fqdn("db"), "A"]]);
        seen.db = db ?? "";
        if (!/10\.180\.0\.2/.test(db ?? "")) return undefined;
        seen.served = [...names(await net.probe(clusterIPs.get("web") ?? "", 80, 20))].sort().join();
        return seen.served === "pod-0,pod-1";
      },
      {
        describe: () =>
          `last seen: ${JSON.stringify(seen)}\nproxy log:\n${proxy?.log().slice(-2000)}\n${net.forwarderReach()}`,
      },
    );
  });

  after(async () => {
    for (const c of [controller, ...elected]) c?.child.kill("SIGKILL");
    await pair?.stop();
    const code = await proxy?.stop();
    await net?.destroy();
    api?.close();
    await cp?.stop();
    assert.equal(code, 0, proxy?.log());
  });

  test("etcd killed for 30 s: names answered, traffic served, slices kept; all follow changes after", async () => {
    const queries = [
      [fqdn("web"), "A"],
      [fqdn("db"), "A"],
      [`_http._tcp.${fqdn("web")}`, "SRV"],
      [fqdn("nope"), "A"],
    ] as const;
    const before = await answers(queries);
    assert.match(before[0] ?? "", new RegExp(`IN A ${clusterIPs.get("web")?.replaceAll(".", "\\.")}`));
    assert.match(before[3] ?? "", /status: NXDOMAIN/);
    const sliceVersions = (await listSlices(api, NS, "web")).slices.map((s) => s.metadata?.resourceVersion);

    await cp.killEtcd();
    const down = Date.now();
    try {
      // The apiserver is up but cannot reach its store: the outage is real.
      await eventually("kube-apiserver to report etcd gone", () =>
        api.get("/readyz").then(
          () => undefined,
          () => true,
        ),
      );
      while (Date.now() - down < ETCD_DOWN_MS) {
        assert.deepEqual(await answers(queries), before);
        assert.equal(await readyStatus(pair.ours), await readyStatus(pair.coredns));
        assert.ok(await serves("web", ["pod-0", "pod-1"]), "traffic to web during the outage");
        assert.equal(controller.child.exitCode, null, controller.log());
        await new Promise((r) => setTimeout(r, 3000));
      }
    } finally {
      await cp.startEtcd();
    }

    await addService("late");
    await eventually("a Service created after the outage sliced", async () =>
      (await endpointsOf("late")).join() === "10.180.0.1,10.180.0.2" ? true : undefined,
    );
    // Nothing changed for web, so nothing was written: its slices came through the outage as they were.
    assert.deepEqual(
      (await listSlices(api, NS, "web")).slices.map((s) => s.metadata?.resourceVersion),
      sliceVersions,
    );
    await addPod(2);
    await eventually("the new Service and the new Pod answered and served", async () => {
      const [late, db] = await answers([
        [fqdn("late"), "A"],
        [fqdn("db"), "A"],
      ]);
      return (
        late?.includes(`IN A ${clusterIPs.get("late")}`) &&
        db?.includes("IN A 10.180.0.3") &&
        (await serves("late", ["pod-0", "pod-1", "pod-2"]))
      );
    });
    assert.equal(controller.child.exitCode, null, controller.log());
  });

  test("kube-apiserver killed: both DNS servers answer from their caches, then follow changes", async () => {
    const queries = [
      [fqdn("web"), "A"],
      [fqdn("late"), "A"],
      [fqdn("db"), "A"],
      [fqdn("nope"), "A"],
      ["-x", clusterIPs.get("web") ?? ""],
    ] as const;
    const before = await answers(queries);
    const seen = pair.ours.output().length;
    await cp.killApiserver();
    try {
      // Ours has lost its watches and failed to reconnect. CoreDNS's client-go retries a refused watch without
      // a word at its default verbosity, so its log cannot say the same; it has lost its connection all the same.
      await eventually("switchyard-dns to see the apiserver gone", () =>
        /ECONNREFUSED/.test(pair.ours.output().slice(seen)) ? true : undefined,
      );
      assert.deepEqual(await answers(queries), before);
      assert.equal(await readyStatus(pair.ours), await readyStatus(pair.coredns));
    } finally {
      await cp.startApiserver();
    }
    await api.delete(`/api/v1/namespaces/${NS}/services/late`);
    await eventually("a Service deleted after the restart gone from both", async () => {
      const [late] = await answers([[fqdn("late"), "A"]]);
      return late?.includes("status: NXDOMAIN");
    });
  });

  test("kube-apiserver blackholed for 60 s: answers, traffic, one slice controller at a time; all recover", async (t) => {
    // The un-elected controller makes way for two elected ones on one Lease.
    controller.child.kill("SIGTERM");
    assert.equal((await controller.exited).code, 0, controller.log());
    const a = startSliceController(cp.kubeconfigPath, ELECTED);
    const b = startSliceController(cp.kubeconfigPath, ELECTED);
    elected.push(a, b);
    const [leader, standby] = await eventually("one controller to lead and the other to know it", () => {
      for (const [l, s] of [
        [a, b],
        [b, a],
      ] as const) {
        if (timesOf(l, "acquired leader lease").length > 0 && follows(s, l)) return [l, s] as const;
      }
      return undefined;
    });
    const queries = [
      [fqdn("web"), "A"],
      [fqdn("db"), "A"],
      [fqdn("nope"), "A"],
    ] as const;
    const before = await answers(queries);

    const hole = new NftBlackhole(Number(new URL(cp.server).port));
    let cutAt = 0;
    let liftAt: number;
    try {
      hole.on();
      cutAt = Date.now();
      // The blackhole is real: a new connection's SYN goes unanswered, neither accepted nor refused.
      assert.equal(await connectOutcome(hole.port, 1000), "silence");
      while (Date.now() - cutAt < BLACKHOLE_MS) {
        assert.deepEqual(await answers(queries), before);
        assert.equal(await readyStatus(pair.ours), await readyStatus(pair.coredns));
        assert.ok(await serves("web", ["pod-0", "pod-1", "pod-2"]), "traffic to web during the blackhole");
        assert.equal(standby.child.exitCode, null, standby.log());
        await new Promise((r) => setTimeout(r, 3000));
      }
    } finally {
      liftAt = Date.now();
      hole.off();
    }
    // Renew deadline 10 s, blackhole 60 s: the leader gave up and exited 1, as kube-controller-manager does.
    assert.equal(leader.child.exitCode, 1, leader.log());
    assert.equal(
      timesOf(leader, "failed to renew lease within the renew deadline, stopping leading").length,
      1,
    );
    assert.equal(timesOf(leader, "leader election lost").length, 1);
    const leaderExit = await leader.exited;
    assert.ok(leaderExit.at < liftAt, "the leader exited during the blackhole");

    const [tookOverAt = 0] = await eventually("the standby to take the Lease", () => {
      const t = timesOf(standby, "acquired leader lease");
      return t.length > 0 ? t : undefined;
    });
    // A kubelet restarts the exited controller; it finds the Lease held and stays standby.
    const restarted = startSliceController(cp.kubeconfigPath, ELECTED);
    elected.push(restarted);
    await eventually("the restarted controller to follow the new leader", () => follows(restarted, standby));

    await addService("after");
    await deletePod(api, NS, "web-2", 0);
    await eventually(
      "a Service and a Pod change after the lift sliced once, programmed and answered",
      async () => {
        for (const service of ["web", "after"]) {
          const { slices } = await listSlices(api, NS, service);
          const endpoints = slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)).sort();
          if (slices.length !== 1 || endpoints.join() !== "10.180.0.1,10.180.0.2") return undefined;
        }
        const [after, db] = await answers([
          [fqdn("after"), "A"],
          [fqdn("db"), "A"],
        ]);
        return (
          after?.includes(`IN A ${clusterIPs.get("after")}`) &&
          !db?.includes("10.180.0.3") &&
          (await serves("after", ["pod-0", "pod-1"])) &&
          (await serves("web", ["pod-0", "pod-1"]))
        );
      },
    );
    const recoveredAt = Date.now();

    // One controller acted at a time: the old leader was gone before the standby took the Lease, each one's syncs
    // (logged at -v=4 as each finishes) lie inside its own time as leader, and the restarted one never synced.
    const [stoppedAt = 0] = timesOf(
      leader,
      "failed to renew lease within the renew deadline, stopping leading",
    );
    t.diagnostic(
      `leader stopped leading +${stoppedAt - cutAt} ms and exited +${leaderExit.at - cutAt} ms after the cut; ` +
        `standby led +${tookOverAt - liftAt} ms and the change after was everywhere +${recoveredAt - liftAt} ms after the lift`,
    );
    assert.ok(tookOverAt >= liftAt, "the standby took the Lease only once the apiserver answered again");
    assert.ok(
      leaderExit.at < tookOverAt,
      `the old leader exited at +${leaderExit.at - cutAt} ms, the standby led at +${tookOverAt - cutAt} ms`,
    );
    const leaderSyncs = timesOf(leader, "finished syncing Service");
    const standbySyncs = timesOf(standby, "finished syncing Service");
    assert.ok(
      leaderSyncs.length > 0 && standbySyncs.length > 0,
      "both leaders synced Services in their turn",
    );
    assert.ok(Math.max(...leaderSyncs) <= leaderExit.at, leader.log());
    assert.ok(Math.min(...standbySyncs) >= tookOverAt, standby.log());
    assert.deepEqual(timesOf(restarted, "acquired leader lease"), []);
    assert.deepEqual(timesOf(restarted, "finished syncing Service"), []);
    assert.equal(standby.child.exitCode, null, standby.log());
    assert.equal(restarted.child.exitCode, null, restarted.log());
  });
});

// The three programs while part of the control plane is gone, on the real etcd and kube-apiserver, with CoreDNS
// 1.14.7 beside switchyard-dns on the same kubeconfig and Corefile. The slice controller writes the slices of Pods
// whose addresses live in a netns lab (apps/kube-proxy/test/netns.ts); switchyard-proxy (nftables) programs them
// on the node and DNS answers their names, so one chain runs from the Pods to a connection.
//  - etcd killed for 30 s, kube-apiserver left up: the apiserver fails /readyz and every write but keeps the
//    watches it serves open (none of the programs logs a failure), so they see silence. Both DNS servers keep
//    answering what they know, identically; traffic keeps flowing through the proxy's rules; the slice controller
//    keeps running and rewrites nothing. After etcd is back a new Service and a new Pod are sliced, programmed and
//    answered.
//  - kube-apiserver killed: watches break and reconnecting is refused. Both DNS servers answer from their caches
//    (client-go keeps an informer's cache through failed watches; so does ours), identically, /ready says the
//    same on both, and after the restart both follow a change.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { eventually } from "@switchyard/kube/testing";
import {
  Api,
  createNamespace,
  createPod,
  createService,
  listSlices,
  missingControlPlane,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/lab/testing";
import { differentialSkip, type Pair, startPair } from "../../apps/cluster-dns/test/helpers/differential.js";
import { createNode } from "../../apps/kube-proxy/test/api.js";
import {
  CLUSTER_CIDR,
  missingKernelTools,
  Net,
  NODE_IP,
  names,
  type ProxyRun,
  startProxy,
} from "../../apps/kube-proxy/test/netns.js";

const SLICE_CONTROLLER = fileURLToPath(
  new URL("../../apps/slice-controller/bin/switchyard-slice-controller.js", import.meta.url),
);
const NS = "outage";
const ZONE = "cluster.local";
const ETCD_DOWN_MS = 30_000;
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

interface SliceController {
  child: ChildProcess;
  log: () => string;
}

function startSliceController(kubeconfig: string): SliceController {
  // Without leader election: renewing a Lease needs etcd, and what a leader does when it cannot is the
  // leader-election tests' subject; what the program keeps through an outage is this one's.
  const child = spawn(
    process.execPath,
    [SLICE_CONTROLLER, `--kubeconfig=${kubeconfig}`, "--leader-elect=false", "--metrics-bind-address=0"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let text = "";
  child.stderr?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  return { child, log: () => text };
}

describe("an etcd and a kube-apiserver outage, side by side with CoreDNS v1.14.7", { skip }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let proxy: ProxyRun;
  let pair: Pair;
  let controller: SliceController;
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
    await eventually("the Pods sliced, programmed and answered", async () => {
      if ((await endpointsOf("web")).join() !== "10.180.0.1,10.180.0.2") return undefined;
      const [db] = await answers([[fqdn("db"), "A"]]);
      return /10\.180\.0\.2/.test(db ?? "") && (await serves("web", ["pod-0", "pod-1"]));
    });
  });

  after(async () => {
    controller?.child.kill("SIGKILL");
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
});

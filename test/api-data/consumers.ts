// Every informer consumer of Switchyard run on a FakeApi that holds one generated cluster, each reduced to
// what it makes of the objects: DNS answers, rendered rules, desired slices, the leader, the status text.
// Each run starts from a fresh FakeApi, so one consumer's writes never reach another's input.
import {
  byNodeName,
  byServiceName,
  EventRecorder,
  endpointSlices,
  endpoints,
  InformerFactory,
  indexNames,
  LeaderElector,
  LeaseLock,
  Logger,
  leases,
  namespaces,
  nodes,
  pods,
  RateLimitingQueue,
  type RestClient,
  realClock,
  services,
} from "@switchyard/kube";
import { FakeApi } from "@switchyard/kube/testing";
import type { ResolvedOptions } from "@switchyard/kube-proxy-app";
import {
  defaultConfig,
  fetchNode,
  localDetector,
  resolve,
  serviceCIDRs,
  watchServiceCIDRs,
} from "@switchyard/kube-proxy-app";
import { containerEnv, nodeStatus, podStatus, resolvConf } from "@switchyard/lab/agent";
import { kindStatusText } from "@switchyard/lab/kind";
import { defaultLabInput, type NodePlan, planLab } from "@switchyard/lab/netns";
import {
  IPTablesProxyBackend,
  IptablesRestoreApplier,
  MetaProxier,
  NFTablesProxyBackend,
  newProxyMetrics,
  PROXY_LABEL_SELECTOR,
  Proxier,
  ProxyHealth,
} from "@switchyard/proxier";
import {
  formatRecord,
  KubeClusterView,
  type KubernetesOptions,
  kubernetesAnswer,
  newQuery,
  rcodeName,
  typeNumber,
} from "@switchyard/resolver";
import type { EndpointSlice as ControllerSlice } from "@switchyard/slice-controller";
import {
  ControllerMetrics,
  EndpointSliceController,
  MirroringController,
  MirroringMetrics,
} from "@switchyard/slice-controller-app";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { Registry } from "prom-client";
import { type Cluster, LEASE_NAMESPACE, NODE, NS, SERVICE_UID } from "./generate.js";

/** What one consumer made of a cluster, and every error its informers or handlers logged on the way. */
export interface Observed {
  output: unknown;
  /** Error lines logged (an informer skipping an object, a handler that threw). Must stay empty. */
  errors: string[];
  /** Informers that had not synced when the output was taken, with why. Must stay empty. */
  notSynced: string[];
}

export interface Consumer {
  name: string;
  run(cluster: Cluster): Promise<Observed>;
}

/** A Logger that keeps its error lines, so a swallowed-and-logged failure still fails the test. */
export function recordingLogger(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  const logger = new Logger({
    level: "error",
    out: { write: (line: string) => errors.push(line.trim()) },
  });
  return { logger, errors };
}

const FIXED_NOW = Date.parse("2026-12-01T10:00:00Z");

/** A FakeApi holding the cluster's objects exactly as generated, nulls included (as the apiserver sends). */
export async function seededApi(cluster: Cluster): Promise<FakeApi> {
  const api = new FakeApi({ now: () => FIXED_NOW });
  const put = async <T extends object>(res: Parameters<FakeApi["seed"]>[0], objs: readonly T[]) => {
    for (const obj of objs) await api.seed(res, structuredClone(obj) as never);
  };
  await put(namespaces, cluster.Namespace);
  await put(nodes, cluster.Node);
  await put(services, cluster.Service);
  await put(endpointSlices, await withServiceUids(api, cluster.EndpointSlice));
  await put(endpoints, cluster.Endpoints);
  await put(pods, cluster.Pod);
  await put(serviceCIDRs, cluster.ServiceCIDR);
  await put(leases, cluster.Lease);
  return api;
}

/** The slices with their Service owner references pointing at the stored Services (see SERVICE_UID). */
async function withServiceUids(api: FakeApi, slices: readonly EndpointSlice[]): Promise<EndpointSlice[]> {
  const uids = new Map((await api.list(services)).items.map((s) => [s.metadata?.name, s.metadata?.uid]));
  return slices.map((slice) => {
    const copy = structuredClone(slice);
    for (const ref of copy.metadata?.ownerReferences ?? []) {
      if (ref.uid.startsWith(SERVICE_UID)) ref.uid = uids.get(ref.uid.slice(SERVICE_UID.length)) ?? ref.uid;
    }
    return copy;
  });
}

const SYNC_TIMEOUT_MS = 5_000;

async function synced(factory: InformerFactory): Promise<string[]> {
  await factory.waitForCacheSync(AbortSignal.timeout(SYNC_TIMEOUT_MS));
  return factory.notSynced();
}

const ZONE = "cluster.local.";
const DNS_OPTIONS: KubernetesOptions = {
  zones: [ZONE, "in-addr.arpa.", "ip6.arpa."],
  primaryZone: ZONE,
  podMode: "verified",
  ttl: 5,
  namespaces: new Set(),
  endpointPodNames: false,
  ignoreEmptyService: false,
  endpoints: true,
  startupTimeoutMs: 5000,
  selfAddresses: [],
};

/** Names whose answers depend on Services, slices, namespaces and pods. */
const DNS_QUESTIONS: [string, string][] = [
  [`web.${NS}.svc.${ZONE}`, "A"],
  [`_http._tcp.web.${NS}.svc.${ZONE}`, "SRV"],
  [`_dns._udp.web.${NS}.svc.${ZONE}`, "SRV"],
  [`manual.${NS}.svc.${ZONE}`, "A"],
  [`_http._tcp.manual.${NS}.svc.${ZONE}`, "SRV"],
  ["10.0.96.10.in-addr.arpa.", "PTR"],
  ["5.1.0.10.in-addr.arpa.", "PTR"],
  [`10-0-1-5.${NS}.pod.${ZONE}`, "A"],
  [`web-0.web.${NS}.svc.${ZONE}`, "A"],
];

/** The resolver's KubeClusterView on the FakeApi, asked through the kubernetes plugin's answer(). */
export const resolverConsumer: Consumer = {
  name: "resolver",
  async run(cluster) {
    const api = await seededApi(cluster);
    const { logger, errors } = recordingLogger();
    const view = new KubeClusterView({ client: api, pods: true, logger, now: () => FIXED_NOW });
    view.start();
    try {
      await view.waitForSync(SYNC_TIMEOUT_MS);
      const answers: string[] = [];
      for (const [name, type] of DNS_QUESTIONS) {
        const out = await kubernetesAnswer(view, DNS_OPTIONS, newQuery(name, typeNumber(type) ?? 0));
        if (out.action !== "reply") {
          answers.push(`${name} ${type}: ${out.action}`);
          continue;
        }
        const r = out.reply;
        const records = [...r.answer, ...r.additional].map(formatRecord).sort();
        answers.push(`${name} ${type}: ${rcodeName(r.rcode)} ${records.join(" | ")}`);
      }
      // Still syncing: a Service created after the generated objects reaches the cache through the watch.
      await api.seed(services, {
        metadata: { name: "late", namespace: NS },
        spec: { clusterIP: "10.96.0.99" },
      });
      await waitFor(() => view.service(NS, "late") !== undefined);
      return { output: answers, errors, notSynced: view.notSyncedReasons() };
    } finally {
      await view.stop();
    }
  },
};

/** Restore input an iptables-restore would have been given; iptables-save finds empty tables. */
function recordingIPTables(): { applier: IptablesRestoreApplier; restored: string[] } {
  const restored: string[] = [];
  const applier = new IptablesRestoreApplier({
    family: "IPv4",
    backend: "nft",
    exec: async (command, _args, options) => {
      const stdin = options?.stdin;
      if (command.endsWith("-restore") && stdin !== undefined)
        restored.push(typeof stdin === "string" ? stdin : stdin.map((c) => c.toString()).join(""));
      return { code: 0, stdout: "", stderr: "" };
    },
  });
  return { applier, restored };
}

/** kube-proxy's own options, in NodeCIDR mode so that the Node's pod CIDRs decide local traffic. */
function proxyOptions(): ResolvedOptions {
  return { ...resolve(defaultConfig()), detectLocalMode: "NodeCIDR" };
}

/**
 * kube-proxy's wiring from apps/kube-proxy/src/app.ts: Service, EndpointSlice, Node and ServiceCIDR
 * informers into a MetaProxier of one IPv4 Proxier per data plane (nftables and iptables), whose backends
 * render into recording fakes instead of the kernel. Output: the first full sync of each.
 */
export const proxierConsumer: Consumer = {
  name: "proxier",
  async run(cluster) {
    const api = await seededApi(cluster);
    const { logger, errors } = recordingLogger();
    const factory = new InformerFactory({ client: api, logger });
    // As the app starts: the Node read once (no waiting for it), its InternalIP is the node IP.
    const { node, ips } = await fetchNode(api, NODE, logger, 0);
    const ip = ips.IPv4 ?? "127.0.0.1";
    const common = {
      family: "IPv4" as const,
      nodeName: NODE,
      nodeIP: ip,
      masqueradeBit: 14,
      masqueradeAll: false,
    };
    const labels = node?.metadata?.labels ?? {};
    const scripts: string[] = [];
    const detector = localDetector(proxyOptions(), "IPv4", node);
    const nft = new NFTablesProxyBackend({
      options: { ...common, nodeLabels: labels, nodePortAddresses: [ip], localDetector: detector },
      nft: { run: (tx) => void scripts.push(tx.toString()), check: () => {} },
    });
    const ipt = recordingIPTables();
    const iptables = new IPTablesProxyBackend({
      options: {
        ...common,
        nodeLabels: labels,
        nodePortAddresses: "all",
        localDetector: detector,
        localhostNodePorts: true,
        syncPeriodMs: 30_000,
      },
      ipt: ipt.applier,
    });
    const health = new ProxyHealth({ clock: realClock, healthTimeoutMs: 60_000 });
    const proxiers = [nft, iptables].map(
      (backend) =>
        new Proxier({
          nodeName: NODE,
          backend,
          metrics: newProxyMetrics(backend.mode),
          health,
          minSyncPeriodMs: 0,
          syncPeriodMs: 30_000,
          logger,
        }),
    );
    const meta = new MetaProxier(proxiers, health);
    wireProxyInformers(factory, meta);
    await watchServiceCIDRs(api, factory, (cidrs) => meta.onServiceCIDRs(cidrs), logger);
    factory.start(new AbortController().signal);
    try {
      const notSynced = await synced(factory);
      meta.start();
      await waitFor(() => proxiers.every((p) => p.syncs.ok + p.syncs.failed > 0));
      const failed = proxiers.filter((p) => p.syncs.failed > 0).map((p) => `${p.family} sync failed`);
      return {
        output: { nftables: scripts, iptables: ipt.restored, healthy: health.isHealthy() },
        errors: [...errors, ...failed],
        notSynced,
      };
    } finally {
      await meta.stop();
      await factory.stop();
    }
  },
};

/** The informers and handlers of apps/kube-proxy/src/app.ts, unchanged. */
function wireProxyInformers(factory: InformerFactory, meta: MetaProxier): void {
  factory.informerFor(services, { labelSelector: PROXY_LABEL_SELECTOR }).addEventHandler({
    onAdd: (s) => meta.onServiceUpdate(undefined, s as Service),
    onUpdate: (a, b) => meta.onServiceUpdate(a as Service, b as Service),
    onDelete: (s) => meta.onServiceUpdate(s as Service, undefined),
  });
  factory.informerFor(endpointSlices, { labelSelector: PROXY_LABEL_SELECTOR }).addEventHandler({
    onAdd: (s) => meta.onEndpointSliceUpdate(s as EndpointSlice, false),
    onUpdate: (_a, b) => meta.onEndpointSliceUpdate(b as EndpointSlice, false),
    onDelete: (s) => meta.onEndpointSliceUpdate(s as EndpointSlice, true),
  });
  factory.informerFor(nodes, { fieldSelector: `metadata.name=${NODE}` }).addEventHandler({
    onAdd: (n) => meta.onNode(n as Node),
    onUpdate: (_a, b) => meta.onNode(b as Node),
    onDelete: () => meta.onNode(undefined),
  });
}

async function waitFor(check: () => boolean, timeoutMs = SYNC_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * What the apiserver stores of a written object: built-in objects are kept as protobuf, where a null, an
 * empty list or map and a missing one are all the same thing (apiserver-shapes.test.ts shows them come
 * back alike), so a write is compared in that form. Fields the fake or the clock chose are dropped too.
 */
function storedForm(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(storedForm);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (["uid", "resourceVersion", "creationTimestamp", "generation"].includes(key)) continue;
    const stored = storedForm(field);
    if (stored === null || stored === undefined) continue;
    if (Array.isArray(stored) && stored.length === 0) continue;
    if (typeof stored === "object" && !Array.isArray(stored) && Object.keys(stored).length === 0) continue;
    out[key] = stored;
  }
  return out;
}

/** The API, with every write the controllers make recorded (verb, resource, body in stored form). */
function recordingWrites(api: FakeApi): { client: RestClient; writes: unknown[] } {
  const writes: unknown[] = [];
  const client = new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      if (!["create", "update", "patch", "delete"].includes(String(prop))) return value.bind(target);
      return (res: { resource: string }, ...args: unknown[]) => {
        if (res.resource !== "events")
          writes.push({ verb: prop, resource: res.resource, args: storedForm(args) });
        return value.call(target, res, ...args);
      };
    },
  });
  return { client, writes };
}

/**
 * Both controllers of apps/slice-controller wired as app.ts wires them, each Service and Endpoints key
 * synced once by hand (no workers, so the result does not depend on timing). Output: the writes they make.
 */
export const sliceControllerConsumer: Consumer = {
  name: "slice-controller",
  async run(cluster) {
    const api = await seededApi(cluster);
    const { client, writes } = recordingWrites(api);
    const { logger, errors } = recordingLogger();
    const factory = new InformerFactory({ client: api, logger });
    const serviceInformer = factory.informerFor(services);
    const slices = factory.informerFor(endpointSlices, {
      indexers: { [indexNames.serviceName]: byServiceName },
    }) as unknown as ReturnType<typeof factory.informerFor<ControllerSlice>>;
    const registry = new Registry();
    const recorder = new EventRecorder({ client: api, component: "test", logger });
    const common = { client, services: serviceInformer, slices, recorder, logger };
    const controller = new EndpointSliceController({
      ...common,
      pods: factory.informerFor(pods),
      nodes: factory.informerFor(nodes),
      queue: new RateLimitingQueue<string>({ registry: false }),
      metrics: new ControllerMetrics(registry),
      maxEndpointsPerSlice: 100,
      batchPeriodMs: 0,
    });
    const mirroring = new MirroringController({
      ...common,
      endpoints: factory.informerFor(endpoints),
      queue: new RateLimitingQueue<string>({ registry: false }),
      metrics: new MirroringMetrics(registry),
      maxEndpointsPerSubset: 1000,
      batchPeriodMs: 0,
    });
    factory.start(new AbortController().signal);
    try {
      const notSynced = await synced(factory);
      const keys = cluster.Service.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
      const failures: string[] = [];
      for (const key of keys) {
        await controller.syncService(key).catch((e: Error) => failures.push(`slices ${key}: ${e.message}`));
        await mirroring.syncEndpoints(key).catch((e: Error) => failures.push(`mirror ${key}: ${e.message}`));
      }
      return { output: { writes, failures }, errors, notSynced };
    } finally {
      await factory.stop();
    }
  },
};

/**
 * Leader election on the generated Lease: one LeaseLock read, then one attempt of a LeaderElector (the
 * campaign ends when it wins or is told the Lease is held). Output: the record read, whether it won, the
 * record it left.
 */
export const leaderElectionConsumer: Consumer = {
  name: "leader-election",
  async run(cluster) {
    const api = await seededApi(cluster);
    // Debug lines too: "held by another candidate" is how an attempt that did not win ends.
    const lines: string[] = [];
    const logger = new Logger({ level: "debug", out: { write: (line: string) => lines.push(line) } });
    const name = cluster.Lease[0]?.metadata?.name ?? "";
    const lock = new LeaseLock(api, LEASE_NAMESPACE, name);
    const before = (await lock.get()).record;
    const campaign = new AbortController();
    let leading = false;
    const clock = { now: () => FIXED_NOW, setTimeout, clearTimeout } as never;
    const elector = new LeaderElector({
      lock,
      identity: "me",
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 5_000,
      clock,
      random: () => 0,
      logger,
      callbacks: {
        onStartedLeading: () => {
          leading = true;
          campaign.abort();
        },
      },
    });
    const done = elector.run(campaign.signal);
    const failed = () => lines.filter((l) => /"level":"(error|warn)"/.test(l));
    await waitFor(() => leading || failed().length > 0 || lines.some((l) => l.includes("held by another")));
    campaign.abort();
    await done;
    const after = (await lock.get()).record;
    return { output: { before, leading, after }, errors: failed(), notSynced: [] };
  },
};

/** The shared indexers of @switchyard/kube on informers of slices and pods. */
export const indexerConsumer: Consumer = {
  name: "indexers",
  async run(cluster) {
    const api = await seededApi(cluster);
    const { logger, errors } = recordingLogger();
    const factory = new InformerFactory({ client: api, logger });
    const slices = factory.informerFor(endpointSlices, {
      indexers: { [indexNames.serviceName]: byServiceName },
    });
    const podInformer = factory.informerFor(pods, { indexers: { [indexNames.nodeName]: byNodeName } });
    factory.start(new AbortController().signal);
    try {
      const notSynced = await synced(factory);
      const names = (objs: readonly { metadata?: { name?: string } }[]) => objs.map((o) => o.metadata?.name);
      return {
        output: {
          slicesOfWeb: names(slices.byIndex(indexNames.serviceName, `${NS}/web`)),
          podsOnNode: names(podInformer.byIndex(indexNames.nodeName, NODE)),
        },
        errors,
        notSynced,
      };
    } finally {
      await factory.stop();
    }
  },
};

/**
 * The lab's pure readers of Pods and Nodes, on objects read through an informer: the node agent's
 * resolv.conf, container environment and posted statuses, and the kind CLI's status text.
 */
export const labConsumer: Consumer = {
  name: "lab",
  async run(cluster) {
    const api = await seededApi(cluster);
    const { logger, errors } = recordingLogger();
    const factory = new InformerFactory({ client: api, logger });
    const podInformer = factory.informerFor(pods);
    const nodeInformer = factory.informerFor(nodes);
    factory.start(new AbortController().signal);
    try {
      const notSynced = await synced(factory);
      const plan = planLab(defaultLabInput);
      const nodePlan = plan.nodeList[0];
      const now = new Date(FIXED_NOW);
      const agent = podInformer.list().map((pod: Pod) => ({
        resolv: resolvConf(pod, plan, "nameserver 192.0.2.1\n"),
        env: (pod.spec?.containers ?? []).map((c) =>
          containerEnv(pod, c.env ?? [], { pod: ["10.0.1.5"], host: ["192.168.0.2"] }, plan),
        ),
        status: podStatus(
          pod,
          {
            hostIps: ["192.168.0.2"],
            podIps: ["10.0.1.5"],
            startTime: "t",
            sandboxReady: true,
            containers: [],
          },
          now,
        ),
      }));
      const nodeStatuses = nodeInformer
        .list()
        .map((n: Node) => nodeStatus(nodePlan as NodePlan, true, now, n.status?.conditions));
      const status = kindStatusText(["header"], nodeInformer.list(), podInformer.list());
      return { output: { agent, nodeStatuses, status }, errors, notSynced };
    } finally {
      await factory.stop();
    }
  },
};

export const CONSUMERS: readonly Consumer[] = [
  resolverConsumer,
  proxierConsumer,
  sliceControllerConsumer,
  leaderElectionConsumer,
  indexerConsumer,
  labConsumer,
];

// What a real kube-apiserver sends back for objects written with every optional list and map EMPTY ([] or
// {}): which of them come back as `null`, which are omitted, which stay empty and which the server fills
// in. Learned from a first run and kept here as the expected values, so this file documents the shapes the
// property test (consumers.test.ts) must cover, and fails when a new Kubernetes version changes them.
// Skips, saying why, when the upstream binaries are missing.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  endpointSlices,
  endpoints,
  HttpRestClient,
  type KubeObject,
  leases,
  loadKubeConfig,
  namespaces,
  nodes,
  pods,
  type ResourceDescriptor,
  resourcePath,
  services,
} from "@switchyard/kube";
import { serviceCIDRs } from "@switchyard/kube-proxy-app";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { type KindName, OPTIONAL_PATHS } from "./generate.js";
import { type Outcome, outcomes, pathsOf, withoutPaths } from "./shapes.js";

const skip = missingControlPlane();
const NS = "api-shapes";

/** One object to write: its resource, its body with every optional list and map empty, and its status. */
interface Case {
  name: string;
  kind: KindName;
  resource: ResourceDescriptor<KubeObject>;
  object: KubeObject;
  /** Written through the status subresource after the create (status is ignored on create). */
  status?: Record<string, unknown>;
  /** For every path sent empty: null, omitted, empty or filled (by the server), as the first run found. */
  expected: Record<string, Outcome>;
  /** Every path anywhere in the object that came back null. */
  expectedNulls: string[];
}

const emptyMeta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  labels: {},
  annotations: {},
  ownerReferences: [],
  finalizers: [],
});
const metaOutcomes = (labels: Outcome = "omitted"): Record<string, Outcome> => ({
  "metadata.labels": labels,
  "metadata.annotations": "omitted",
  "metadata.ownerReferences": "omitted",
  "metadata.finalizers": "omitted",
});

const CASES: Case[] = [
  {
    name: "Namespace",
    kind: "Namespace",
    resource: namespaces as ResourceDescriptor<KubeObject>,
    object: { metadata: emptyMeta(NS), spec: { finalizers: [] } } as KubeObject,
    // The apiserver labels every Namespace with kubernetes.io/metadata.name and gives it the kubernetes finalizer.
    expected: { ...metaOutcomes("filled"), "spec.finalizers": "filled" },
    expectedNulls: [],
  },
  {
    name: "Service",
    kind: "Service",
    resource: services as ResourceDescriptor<KubeObject>,
    object: {
      metadata: emptyMeta("headless", NS),
      spec: {
        clusterIP: "None",
        clusterIPs: [],
        ipFamilies: [],
        ports: [],
        selector: {},
        externalIPs: [],
        loadBalancerSourceRanges: [],
      },
    } as KubeObject,
    status: { loadBalancer: { ingress: [] }, conditions: [] },
    expected: {
      ...metaOutcomes(),
      "spec.clusterIPs": "filled",
      "spec.ipFamilies": "filled",
      "spec.ports": "omitted",
      "spec.selector": "omitted",
      "spec.externalIPs": "omitted",
      "spec.loadBalancerSourceRanges": "omitted",
      "status.loadBalancer.ingress": "omitted",
      "status.conditions": "omitted",
    },
    expectedNulls: [],
  },
  {
    name: "EndpointSlice (no endpoints, no ports)",
    kind: "EndpointSlice",
    resource: endpointSlices as ResourceDescriptor<KubeObject>,
    object: {
      metadata: { ...emptyMeta("placeholder", NS), labels: { "kubernetes.io/service-name": "headless" } },
      addressType: "IPv4",
      endpoints: [],
      ports: [],
    } as KubeObject,
    expected: {
      "metadata.annotations": "omitted",
      "metadata.ownerReferences": "omitted",
      "metadata.finalizers": "omitted",
      endpoints: "null",
      ports: "null",
    },
    expectedNulls: ["endpoints", "ports"],
  },
  {
    name: "EndpointSlice (an endpoint with empty hints and topology)",
    kind: "EndpointSlice",
    resource: endpointSlices as ResourceDescriptor<KubeObject>,
    object: {
      metadata: emptyMeta("hinted", NS),
      addressType: "IPv4",
      endpoints: [
        {
          addresses: ["10.0.0.1"],
          conditions: {},
          hints: { forZones: [], forNodes: [] },
          deprecatedTopology: {},
        },
      ],
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    } as KubeObject,
    expected: {
      ...metaOutcomes(),
      "endpoints[].conditions": "empty",
      "endpoints[].hints.forZones": "omitted",
      "endpoints[].hints.forNodes": "omitted",
      "endpoints[].deprecatedTopology": "omitted",
    },
    expectedNulls: [],
  },
  {
    name: "Endpoints (no subsets)",
    kind: "Endpoints",
    resource: endpoints as ResourceDescriptor<KubeObject>,
    object: { metadata: emptyMeta("none", NS), subsets: [] } as KubeObject,
    expected: { ...metaOutcomes(), subsets: "omitted" },
    expectedNulls: [],
  },
  {
    name: "Endpoints (a subset with empty lists)",
    kind: "Endpoints",
    resource: endpoints as ResourceDescriptor<KubeObject>,
    object: {
      metadata: emptyMeta("hollow", NS),
      subsets: [{ addresses: [{ ip: "10.0.0.2" }], notReadyAddresses: [], ports: [] }],
    } as KubeObject,
    expected: {
      ...metaOutcomes(),
      "subsets[].notReadyAddresses": "omitted",
      "subsets[].ports": "omitted",
    },
    expectedNulls: [],
  },
  {
    name: "Pod",
    kind: "Pod",
    resource: pods as ResourceDescriptor<KubeObject>,
    object: {
      metadata: emptyMeta("pod", NS),
      spec: {
        containers: [{ name: "app", image: "registry.example/app:1", ports: [], env: [] }],
        tolerations: [],
        dnsConfig: { nameservers: [], searches: [], options: [] },
      },
    } as KubeObject,
    status: { podIPs: [], hostIPs: [], conditions: [], containerStatuses: [] },
    expected: {
      ...metaOutcomes(),
      "spec.containers[].ports": "omitted",
      "spec.containers[].env": "omitted",
      // The DefaultTolerationSeconds admission plugin adds the not-ready and unreachable tolerations.
      "spec.tolerations": "filled",
      "spec.dnsConfig.nameservers": "omitted",
      "spec.dnsConfig.searches": "omitted",
      "spec.dnsConfig.options": "omitted",
      "status.podIPs": "omitted",
      "status.hostIPs": "omitted",
      "status.conditions": "omitted",
      "status.containerStatuses": "omitted",
    },
    expectedNulls: [],
  },
  {
    name: "Node",
    kind: "Node",
    resource: nodes as ResourceDescriptor<KubeObject>,
    object: { metadata: emptyMeta("shapes-node"), spec: { podCIDRs: [], taints: [] } } as KubeObject,
    status: { addresses: [], conditions: [], allocatable: {}, capacity: {} },
    expected: {
      ...metaOutcomes(),
      "spec.podCIDRs": "omitted",
      // TaintNodesByCondition adds node.kubernetes.io/not-ready:NoSchedule to a new Node.
      "spec.taints": "filled",
      "status.addresses": "omitted",
      "status.conditions": "omitted",
      "status.allocatable": "omitted",
      "status.capacity": "omitted",
    },
    expectedNulls: [],
  },
  {
    // spec.cidrs must hold one or two CIDRs, so only the metadata and the status conditions can be empty.
    name: "ServiceCIDR",
    kind: "ServiceCIDR",
    resource: serviceCIDRs as unknown as ResourceDescriptor<KubeObject>,
    object: { metadata: emptyMeta("shapes-cidr"), spec: { cidrs: ["10.200.0.0/24"] } } as KubeObject,
    status: { conditions: [] },
    expected: { ...metaOutcomes(), "status.conditions": "omitted" },
    expectedNulls: [],
  },
  {
    // A Lease's spec is pointers: an empty spec, and the one string pointer set to "".
    name: "Lease",
    kind: "Lease",
    resource: leases as ResourceDescriptor<KubeObject>,
    object: { metadata: emptyMeta("lock", NS), spec: { holderIdentity: "" } } as KubeObject,
    expected: { ...metaOutcomes() },
    expectedNulls: [],
  },
];

describe("API object shapes from a real kube-apiserver", { skip, timeout: 180_000 }, () => {
  let cp: TestControlPlane;
  let client: HttpRestClient;
  let raw: (method: string, path: string, body?: unknown) => Promise<string>;

  before(async () => {
    cp = await startControlPlane();
    client = new HttpRestClient(loadKubeConfig({ kubeconfig: cp.kubeconfigPath }));
    raw = rawClient(cp);
  });
  after(async () => {
    client?.close();
    await cp?.stop();
  });

  for (const c of CASES) {
    test(`${c.name}: what comes back null, omitted, empty or filled`, async () => {
      const path = resourcePath(c.resource, c.object.metadata?.namespace, c.object.metadata?.name);
      const collection = resourcePath(c.resource, c.object.metadata?.namespace);
      await raw("POST", collection, c.object);
      if (c.status) {
        const current = JSON.parse(await raw("GET", path)) as Record<string, unknown>;
        await raw("PUT", `${path}/status`, {
          ...current,
          status: { ...(current.status as object), ...c.status },
        });
      }
      const sent = { ...c.object, ...(c.status ? { status: c.status } : {}) };
      const got = JSON.parse(await raw("GET", path)) as unknown;
      const learned = { outcomes: outcomes(sent, got), nulls: pathsOf(got, (v) => v === null) };
      // biome-ignore lint/suspicious/noUndeclaredEnvVars: a knob for replaying a run by hand; no turbo task reads it
      if (process.env.API_DATA_LEARN) console.log(c.name, JSON.stringify(learned));
      assert.deepEqual(learned.outcomes, c.expected, `${c.name}: what came back for the empty fields`);
      assert.deepEqual(learned.nulls, c.expectedNulls, `${c.name}: the null fields`);
      // The property test must generate every null the apiserver really sends.
      for (const path of learned.nulls)
        assert.ok(OPTIONAL_PATHS[c.kind].includes(path), `generate ${c.kind} ${path}`);

      // The client reads the same object with the null fields absent, and nothing else changed.
      const name = c.object.metadata?.name ?? "";
      const namespace = c.object.metadata?.namespace;
      const decoded = await client.get(c.resource, name, namespace ? { namespace } : {});
      assert.deepEqual(decoded, withoutPaths(got, learned.nulls), `${c.name}: HttpRestClient.get`);

      // A watch sends the object in the same shape (resourceVersion 0: the watch cache's current state).
      const query = `?watch=1&resourceVersion=0&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
      const event = JSON.parse((await raw("WATCH", `${collection}${query}`)).split("\n")[0] ?? "") as {
        object: unknown;
      };
      assert.deepEqual(
        pathsOf(event.object, (v) => v === null),
        learned.nulls,
        `${c.name}: nulls in a watch`,
      );
      const watched = await firstWatchEvent(client, c.resource, name, namespace);
      assert.deepEqual(watched, decoded, `${c.name}: HttpRestClient.watch`);
    });
  }
});

/** The object of the first event of a client watch on one object. */
async function firstWatchEvent(
  client: HttpRestClient,
  resource: ResourceDescriptor<KubeObject>,
  name: string,
  namespace: string | undefined,
): Promise<unknown> {
  const abort = new AbortController();
  const stream = client.watch(resource, {
    ...(namespace ? { namespace } : {}),
    fieldSelector: `metadata.name=${name}`,
    resourceVersion: "0",
    allowWatchBookmarks: false,
    signal: abort.signal,
  });
  for await (const event of stream) {
    abort.abort();
    return event.object;
  }
  throw new Error(`no watch event for ${name}`);
}

/**
 * Plain HTTPS with the admin client certificate, the body returned as text: nothing of @switchyard/kube
 * between the apiserver and JSON.parse. "WATCH" is a GET that returns after the first line of the stream.
 */
function rawClient(cp: TestControlPlane): (method: string, path: string, body?: unknown) => Promise<string> {
  const pki = (file: string) => readFileSync(join(cp.stateDir, "pki", file));
  const tls = { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") };
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const url = new URL(path, cp.server);
      const watch = method === "WATCH";
      const req = request(url, { method: watch ? "GET" : method, ...tls }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          if (watch && text.includes("\n")) {
            resolve(text);
            req.destroy();
          }
        });
        res.on("end", () => {
          if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
          else resolve(text);
        });
        res.on("error", (err) => (watch && text.includes("\n") ? undefined : reject(err)));
      });
      req.on("error", (err) => (watch ? undefined : reject(err)));
      if (body !== undefined) {
        req.setHeader("content-type", "application/json");
        req.end(JSON.stringify(body));
      } else req.end();
    });
}

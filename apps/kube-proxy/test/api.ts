// A tiny admin client for the lab control plane (client certificate from its PKI), and the
// objects these tests write: Services and EndpointSlices created directly, as an EndpointSlice
// controller would have left them.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import type { Service, ServiceSpec } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export interface Api {
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

export function apiClient(server: string, stateDir: string): Api {
  const url = new URL(server);
  const pki = join(stateDir, "pki");
  const tls = {
    ca: readFileSync(join(pki, "ca.crt")),
    cert: readFileSync(join(pki, "admin.crt")),
    key: readFileSync(join(pki, "admin.key")),
  };
  return {
    call: (method, path, body) =>
      new Promise((resolve, reject) => {
        const contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json";
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path,
            method,
            headers: { "content-type": contentType },
            ...tls,
          },
          (res) => {
            let text = "";
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => {
              if ((res.statusCode ?? 500) >= 300)
                reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
              else resolve(JSON.parse(text));
            });
          },
        );
        req.on("error", reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
      }),
  };
}

export async function createNode(api: Api, name: string, ip: string): Promise<void> {
  await api.call("POST", "/api/v1/nodes", {
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
  });
  await api.call("PATCH", `/api/v1/nodes/${name}/status`, {
    status: { addresses: [{ type: "InternalIP", address: ip }] },
  });
}

export async function createService(api: Api, ns: string, name: string, spec: ServiceSpec): Promise<Service> {
  return api.call<Service>("POST", `/api/v1/namespaces/${ns}/services`, { metadata: { name }, spec });
}

/** Endpoint IP → node name. */
export type Backends = Record<string, string>;

function slice(ns: string, svc: string, backends: Backends, port: number): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { namespace: ns, name: `${svc}-1`, labels: { "kubernetes.io/service-name": svc } },
    addressType: "IPv4",
    endpoints: Object.entries(backends).map(([ip, nodeName]) => ({
      addresses: [ip],
      nodeName,
      conditions: { ready: true, serving: true, terminating: false },
    })),
    ports: [{ name: "http", port, protocol: "TCP" }],
  };
}

export async function createSlice(api: Api, ns: string, svc: string, backends: Backends, port = 80) {
  await api.call(
    "POST",
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
    slice(ns, svc, backends, port),
  );
}

/** Replaces the endpoints of the Service's slice. */
export async function setSlice(api: Api, ns: string, svc: string, backends: Backends, port = 80) {
  const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${svc}-1`;
  const current = await api.call<EndpointSlice>("GET", path);
  await api.call("PUT", path, { ...slice(ns, svc, backends, port), metadata: current.metadata });
}

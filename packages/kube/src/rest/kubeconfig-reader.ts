// Kubeconfig files read without client-node, for the users almost every component has: a client certificate,
// a bearer token or a token file, over a cluster with a CA or insecure-skip-tls-verify. Loading client-node
// costs a process about 50 MiB of resident memory (bench/results/resolver-memory.md), more than the rest of
// a DNS server; only exec plugins, auth providers, basic auth, impersonation and proxies still need it, and
// readKubeconfigFile says so by returning undefined.
import { readFileSync } from "node:fs";
import type * as https from "node:https";
import { dirname, resolve } from "node:path";
import { load } from "js-yaml";
import { type ClusterAccess, fileToken } from "./in-cluster.js";

/** A named entry of a kubeconfig list (clusters, users, contexts), with kubectl's field names. */
interface Named<T> {
  name?: string;
  cluster?: T;
  user?: T;
  context?: T;
}
type Fields = Record<string, unknown>;

interface RawKubeconfig {
  clusters?: Named<Fields>[] | null;
  users?: Named<Fields>[] | null;
  contexts?: Named<Fields>[] | null;
  "current-context"?: string;
}

/** User fields only client-node handles: with any of them set, the file goes to client-node. */
const CLIENT_NODE_USER_FIELDS = ["exec", "auth-provider", "username", "password", "as", "as-groups"];
const CLIENT_NODE_CLUSTER_FIELDS = ["proxy-url"];

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** `field` (a file, relative to the kubeconfig) or `field-data` (base64), read when asked. */
function material(entry: Fields, field: string, dir: string): (() => Buffer) | undefined {
  const data = str(entry[`${field}-data`]);
  if (data) {
    const bytes = Buffer.from(data, "base64");
    return () => bytes;
  }
  const file = str(entry[field]);
  if (!file) return undefined;
  const path = resolve(dir, file);
  // Read on every request, as client-node does: rotated certificates are picked up.
  return () => readFileSync(path);
}

function entryNamed(
  list: Named<Fields>[] | null | undefined,
  kind: "cluster" | "user" | "context",
  name?: string,
) {
  const found = (list ?? []).find((e) => e.name === name);
  return found ? (found[kind] ?? {}) : undefined;
}

/** The bearer token of a user: `token` wins over kubectl's `tokenFile` (client-node's `token-file`). */
function bearer(user: Fields, dir: string): (() => string) | undefined {
  const token = str(user.token);
  if (token) return () => token;
  const file = str(user.tokenFile) ?? str(user["token-file"]);
  return file ? fileToken(resolve(dir, file)) : undefined;
}

/**
 * The access a kubeconfig file gives under `context` (its current context by default), or undefined when its
 * user needs client-node. Throws one line for a file that does not parse or names what it does not have.
 */
export function readKubeconfigFile(
  path: string,
  source: string,
  context?: string,
): ClusterAccess | undefined {
  const fail = (why: string) => new Error(`kubeconfig ${path} (${source}) ${why}`);
  let raw: RawKubeconfig;
  try {
    raw = (load(readFileSync(path, "utf8")) ?? {}) as RawKubeconfig;
  } catch (err) {
    throw fail(`is invalid: ${(err as Error).message.split("\n")[0]}`);
  }
  if (typeof raw !== "object") throw fail("is invalid: not a mapping");
  const ctx = entryNamed(raw.contexts, "context", context ?? raw["current-context"]);
  if (context !== undefined && !ctx) throw new Error(`kubeconfig ${path} has no context '${context}'`);
  const cluster = ctx ? entryNamed(raw.clusters, "cluster", str(ctx.cluster)) : undefined;
  const server = cluster ? str(cluster.server) : undefined;
  if (!cluster || !server) throw fail("has no current cluster");
  const user = entryNamed(raw.users, "user", str(ctx?.user)) ?? {};
  if (CLIENT_NODE_USER_FIELDS.some((f) => user[f] !== undefined)) return undefined;
  if (CLIENT_NODE_CLUSTER_FIELDS.some((f) => cluster[f] !== undefined)) return undefined;
  return accessOf(path, str(ctx?.cluster) ?? "", server, cluster, user);
}

function accessOf(path: string, name: string, server: string, cluster: Fields, user: Fields): ClusterAccess {
  const dir = dirname(path);
  const skipTLSVerify = cluster["insecure-skip-tls-verify"] === true;
  const servername = str(cluster["tls-server-name"]);
  const ca = material(cluster, "certificate-authority", dir);
  const cert = material(user, "client-certificate", dir);
  const key = material(user, "client-key", dir);
  const token = bearer(user, dir);
  const current = { name, server, skipTLSVerify, ...(servername ? { tlsServerName: servername } : {}) };
  return {
    getCurrentCluster: () => current,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      if (skipTLSVerify) opts.rejectUnauthorized = false;
      else if (ca) opts.ca = ca();
      if (servername) opts.servername = servername;
      if (cert) opts.cert = cert();
      if (key) opts.key = key();
      if (token) opts.headers = { ...opts.headers, Authorization: `Bearer ${token()}` };
    },
  } as ClusterAccess;
}

// Kubeconfig files read without client-node, for the users almost every component has: a client certificate,
// a bearer token or a token file, over a cluster with a CA or insecure-skip-tls-verify. Loading client-node
// costs a process about 50 MiB of resident memory (bench/results/resolver-memory.md), more than the rest of
// a DNS server, and installing it 64 MB of disk; only exec plugins, auth providers, basic auth, impersonation and
// proxies still need it, and readKubeconfigFile says which of them a file uses.
import { readFileSync } from "node:fs";
import type * as https from "node:https";
import { dirname, resolve } from "node:path";
import { load } from "js-yaml";
import type { ClusterAccess, CurrentCluster } from "./cluster-access.js";
import { fileToken } from "./in-cluster.js";

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

/** User fields only client-node handles, each with the feature it is: with any of them set, the file needs it. */
const CLIENT_NODE_USER_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ["exec", "an exec plugin"],
  ["auth-provider", "an auth provider"],
  ["username", "basic auth"],
  ["password", "basic auth"],
  ["as", "impersonation"],
  ["as-groups", "impersonation"],
];
const CLIENT_NODE_CLUSTER_FIELDS: ReadonlyArray<readonly [string, string]> = [["proxy-url", "a proxy-url"]];

/**
 * A kubeconfig file as read here: the access it gives, or, when its user or cluster needs client-node, which
 * feature that is ("user admin uses an exec plugin") and the cluster it names.
 */
export type KubeconfigFile =
  | { access: ClusterAccess }
  | { clientNodeFeature: string; cluster: CurrentCluster };

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
 * A kubeconfig file under `context` (its current context by default): its access, or the feature that needs
 * client-node. Throws one line for a file that does not parse or names what it does not have.
 */
export function readKubeconfigFile(path: string, source: string, context?: string): KubeconfigFile {
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
  const userName = str(ctx?.user) ?? "";
  const user = entryNamed(raw.users, "user", userName) ?? {};
  const current = currentCluster(str(ctx?.cluster) ?? "", server, cluster);
  const byUser = CLIENT_NODE_USER_FIELDS.find(([f]) => user[f] !== undefined);
  if (byUser) return { clientNodeFeature: `user ${userName} uses ${byUser[1]}`, cluster: current };
  const byCluster = CLIENT_NODE_CLUSTER_FIELDS.find(([f]) => cluster[f] !== undefined);
  if (byCluster)
    return { clientNodeFeature: `cluster ${current.name} uses ${byCluster[1]}`, cluster: current };
  return { access: accessOf(path, current, cluster, user) };
}

function currentCluster(name: string, server: string, cluster: Fields): CurrentCluster {
  const servername = str(cluster["tls-server-name"]);
  const proxyUrl = str(cluster["proxy-url"]);
  return {
    name,
    server,
    skipTLSVerify: cluster["insecure-skip-tls-verify"] === true,
    ...(servername ? { tlsServerName: servername } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
  };
}

function accessOf(path: string, current: CurrentCluster, cluster: Fields, user: Fields): ClusterAccess {
  const dir = dirname(path);
  const { skipTLSVerify, tlsServerName: servername } = current;
  const ca = material(cluster, "certificate-authority", dir);
  const cert = material(user, "client-certificate", dir);
  const key = material(user, "client-key", dir);
  const token = bearer(user, dir);
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
  };
}

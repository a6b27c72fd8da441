import { readFileSync, statSync } from "node:fs";
import type * as https from "node:https";
import type { ClusterAccess } from "./cluster-access.js";

export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** How long a read token is used before the file is read again: client-go's cached file token source. */
const TOKEN_REREAD_MS = 60_000;

export interface InClusterOptions {
  env?: NodeJS.ProcessEnv;
  /** Prefix for the service-account folder (tests point it at a temp dir). */
  pathPrefix?: string;
  now?: () => number;
}

/**
 * A bearer token kept in a file, as client-go's cached file token source reads it: read at once (a missing file
 * throws, naming it), then again when a minute has passed or the file's mtime moved, never on every request.
 */
export function fileToken(path: string, now: () => number = Date.now): () => string {
  let token = "";
  let readAt = Number.NEGATIVE_INFINITY;
  let readMtime = 0;
  return () => {
    if (now() - readAt < TOKEN_REREAD_MS && statSync(path).mtimeMs === readMtime) return token;
    token = readFileSync(path, "utf8").trim();
    readAt = now();
    readMtime = statSync(path).mtimeMs;
    return token;
  };
}

/**
 * A pod's own credentials, as client-go's rest.InClusterConfig reads them: the API server from
 * KUBERNETES_SERVICE_HOST/PORT, the cluster CA from ca.crt, and the bearer token from the token file,
 * read again after a minute so that a rotated projected token is picked up. Kept free of client-node on
 * purpose: loading that library costs a process about 80 MiB of memory, which a DNS pod with kubeadm's
 * 170Mi limit cannot spare, and a pod needs nothing of it.
 */
export function inClusterAccess(options: InClusterOptions = {}): ClusterAccess {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined",
    );
  }
  const dir = `${options.pathPrefix ?? ""}${serviceAccountDir}`;
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const currentToken = fileToken(`${dir}/token`, now);
  // The token first, as client-go reads it: a pod without one fails naming the token file.
  currentToken();
  const ca = readFileSync(`${dir}/ca.crt`);
  const cluster = { name: "inCluster", server, skipTLSVerify: false };
  return {
    getCurrentCluster: () => cluster,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      opts.ca = ca;
      opts.headers = { ...opts.headers, Authorization: `Bearer ${currentToken()}` };
    },
  };
}

// Runs the real kube-proxy in a network namespace against a real API server, and applies
// our rendered rules to the real iptables-restore / nft in a second namespace, so both
// can be dumped by the same tools and compared.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Api, resolveBinary } from "@switchyard/testbed";

export { type KubeProxyRun, startKubeProxy } from "@switchyard/testbed";

/**
 * Upstream's kube-proxy where the project's resolver finds it (SWITCHYARD_KUBE_PROXY, SWITCHYARD_UPSTREAM_BIN,
 * the lab's cache for the pinned version under any HOME or SWITCHYARD_CACHE_DIR, then PATH); "" when absent.
 */
export const KUBE_PROXY = resolveBinary("kube-proxy").path ?? "";

/** Why the upstream diff cannot run here, or undefined when it can. */
export function missingUpstream(): string | undefined {
  if (!KUBE_PROXY)
    return "no upstream kube-proxy (npx switchyard-lab upstream build, or SWITCHYARD_KUBE_PROXY)";
  if (process.getuid?.() !== 0) return "needs root for network namespaces";
  for (const tool of ["ip", "iptables-save", "iptables-restore", "nft"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

export function run(args: readonly string[], input?: string): string {
  const [cmd = "", ...rest] = args;
  return execFileSync(cmd, rest, { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
}

export function inNetns(ns: string, args: readonly string[], input?: string): string {
  return run(["ip", "netns", "exec", ns, ...args], input);
}

/** A namespace with loopback up. */
export function createNetns(name: string): void {
  run(["ip", "netns", "add", name]);
  inNetns(name, ["ip", "link", "set", "lo", "up"]);
}

export function deleteNetns(name: string): void {
  try {
    run(["ip", "netns", "delete", name]);
  } catch {
    // already gone
  }
}

/**
 * A veth from the host into `ns`, returning the host side's address. The namespace side
 * also carries the node IP (this kernel has no dummy interfaces).
 */
export function linkToHost(ns: string, hostIf: string, subnet: number, nodeIP: string): string {
  const hostIP = `169.254.${subnet}.1`;
  run(["ip", "link", "add", hostIf, "type", "veth", "peer", "name", "eth0", "netns", ns]);
  run(["ip", "addr", "add", `${hostIP}/30`, "dev", hostIf]);
  run(["ip", "link", "set", hostIf, "up"]);
  inNetns(ns, ["ip", "addr", "add", `169.254.${subnet}.2/30`, "dev", "eth0"]);
  inNetns(ns, ["ip", "addr", "add", `${nodeIP}/24`, "dev", "eth0"]);
  inNetns(ns, ["ip", "link", "set", "eth0", "up"]);
  return hostIP;
}

/** Forwards TCP from `host`:(free port) to `target`; the namespace reaches the API server through it. */
export async function startForwarder(host: string, target: { host: string; port: number }): Promise<Server> {
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close);
    upstream.on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

export type ApiClient = Pick<Api, "call">;

/** The lab's test client; `pki` is the control plane's pki folder. */
export function apiClient(server: string, pki: string): ApiClient {
  return new Api(server, dirname(pki));
}

/** The admin kubeconfig pointed at `server`, still verifying the API server's 127.0.0.1 certificate. */
export function kubeconfigVia(kubeconfigPath: string, server: string): string {
  const text = readFileSync(kubeconfigPath, "utf8").replace(
    /^(\s*)server: .*$/m,
    (_m, indent: string) => `${indent}server: ${server}\n${indent}tls-server-name: 127.0.0.1`,
  );
  const path = join(mkdtempSync(join(tmpdir(), "switchyard-kp-")), "kubeconfig");
  writeFileSync(path, text);
  return path;
}

/** Polls `dump` until `ready` holds and two dumps in a row agree; the stable dump. */
export async function waitForStableDump(
  dump: () => string,
  ready: (text: string) => boolean,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    let text = "";
    try {
      // iptables-save stamps each table with the time; that is not a change
      text = dump()
        .split("\n")
        .filter((l) => !l.startsWith("#"))
        .join("\n");
    } catch {
      // the table may not exist yet
    }
    // ready() may throw to give up early (say, the process died)
    if (ready(text) && text === last) return text;
    last = text;
    await sleep(1000);
  }
  throw new Error(`rules did not settle within ${timeoutMs} ms; last dump:\n${last}`);
}

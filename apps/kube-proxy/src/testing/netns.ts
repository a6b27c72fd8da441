// A one-node cluster network in namespaces this process creates and always removes:
//
//   host ── veth 169.254.<n>.1/30 ─┐ (API server reached through a TCP forwarder on it)
//   client ns  eth0 192.168.0.3 ── node ns eth0 192.168.0.2 (NODE_IP), api0 169.254.<n>.2
//                                  br0 10.180.0.254/24 ── pod ns eth0 10.180.0.N (one per pod)
//
// switchyard-proxy runs in the node namespace as a child process. Pods answer every TCP
// connection with "<pod name> <peer address>", so tests see who answered and whom it saw.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const NODE_IP = "192.168.0.2";
export const CLIENT_IP = "192.168.0.3";
export const BRIDGE_IP = "10.180.0.254";
export const CLUSTER_CIDR = "10.180.0.0/16";
const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * A command run to its end without blocking this process: what a probe runs, since this process also relays the
 * node's connections to the apiserver (kubeconfigFor's forwarder). A synchronous probe of unanswered connections
 * stalled that relay for its whole length (20 × 1.5 s), so a proxy whose first lists were in flight got no answer
 * within its 30 s timeout, again and again: the control-plane outage test's proxy never synced in two CI runs.
 */
function shAsync(args: readonly string[]): Promise<string> {
  const [cmd = "", ...rest] = args;
  return new Promise((resolve, reject) =>
    execFile(cmd, rest, { encoding: "utf8", maxBuffer: 512 * 2 ** 20 }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stderr })) : resolve(stdout),
    ),
  );
}

export function sh(args: readonly string[], input?: string): string {
  const [cmd = "", ...rest] = args;
  // Rule listings of a 10k-Service node run to tens of MiB; the default 1 MiB would fail them (ENOBUFS).
  return execFileSync(cmd, rest, {
    input,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
    maxBuffer: 512 * 2 ** 20,
  });
}

/** Why these tests cannot run here, or undefined. */
export function missingKernelTools(tools: readonly string[]): string | undefined {
  if (process.getuid?.() !== 0) return "needs root for network namespaces";
  for (const tool of ["ip", ...tools]) {
    try {
      sh(["sh", "-c", `command -v ${tool}`]);
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

const SERVER = `
const net = require("node:net");
const name = process.argv[1];
// A client that resets its connection must not take the server down with it.
net.createServer((s) => { s.on("error", () => {}); s.end(name + " " + s.remoteAddress); }).listen(80, "0.0.0.0", () => console.log("ready"));
`;

// Connects count times (or until killed, count 0) and prints one JSON line of answers.
/** `sh -c IN_CGROUP <cgroup dir> command...`: joins the cgroup2 directory, then runs the command. */
const IN_CGROUP = 'echo $$ > "$0/cgroup.procs" && exec "$@"';

const PROBE = `
const net = require("node:net");
const [host, port, count, timeout, pause] = [process.argv[1], +process.argv[2], +process.argv[3], +process.argv[4], +(process.argv[5] ?? 0)];
const once = () => new Promise((resolve) => {
  let data = "";
  const s = net.connect({ host, port });
  s.setTimeout(timeout, () => { s.destroy(); resolve("ETIMEDOUT"); });
  s.on("data", (d) => (data += d));
  s.on("end", () => resolve(data));
  s.on("error", (e) => resolve(e.code ?? String(e)));
});
(async () => {
  const out = [];
  let stop = false;
  process.on("SIGTERM", () => { stop = true; });
  for (let i = 0; count === 0 ? !stop : i < count; i++) {
    out.push(await once());
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
  }
  console.log(JSON.stringify(out));
})();
`;

export class Net {
  readonly node: string;
  readonly client: string;
  readonly pods: { name: string; ip: string; ns: string }[] = [];
  readonly hostIP: string;
  readonly apiIP: string;
  readonly #namespaces: string[] = [];
  readonly #children: ChildProcess[] = [];
  readonly #hostLink: string;
  #forwarder: Server | undefined;
  /** Each connection the forwarder took: whether its upstream connected, the bytes each way, its first error. */
  #links: { upstream: string; toApiserver: number; fromApiserver: number; error: string }[] = [];
  #hosts = 0;

  /**
   * `nodePid`: build the node in that process's network namespace (named with `ip netns attach`) instead of
   * a new one, so a container started with `--network none` becomes the node (the image tests).
   */
  constructor(
    readonly prefix: string,
    subnet: number,
    readonly nodePid?: number,
  ) {
    this.node = `${prefix}-node`;
    this.client = `${prefix}-client`;
    this.hostIP = `169.254.${subnet}.1`;
    this.apiIP = `169.254.${subnet}.2`;
    this.#hostLink = `${prefix}h`.slice(0, 15);
  }

  /**
   * A host link left by an interrupted run may still hold this /30: the API server's forwarder would then be
   * unreachable from the node and the proxy would wait on its lists; say so at once instead.
   */
  #refuseTakenHostNetwork(): void {
    const network = `${this.hostIP.replace(/\.1$/, ".0")}/30`;
    const taken = sh(["ip", "-o", "route", "show", network]).trim();
    if (taken)
      throw new Error(
        `${network} is routed already (${taken}): a leftover of an interrupted run? ip link del it`,
      );
  }

  #netns(name: string, pid?: number): void {
    sh(pid ? ["ip", "netns", "attach", name, String(pid)] : ["ip", "netns", "add", name]);
    this.#namespaces.push(name);
    sh(["ip", "-n", name, "link", "set", "lo", "up"]);
  }

  in(ns: string, args: readonly string[], input?: string): string {
    return sh(["ip", "netns", "exec", ns, ...args], input);
  }

  /**
   * Deletes the node's conntrack entries of TCP connects to `ip` that were never answered. A probe sent before the
   * proxy's first sync goes out untranslated and conntrack keeps that flow (SYN_SENT, no NAT) for 120 s; a later
   * connect from the same source port, which the client's kernel can draw again within seconds, is then taken for
   * a retransmission of it and not translated either: nftables mode rejects it as traffic to an unserved ClusterIP
   * port (ECONNREFUSED), iptables mode sends it nowhere (ETIMEDOUT). kube-proxy's rules do the same; a client that
   * waited for the rules forgets those flows here.
   */
  forgetUnansweredFlows(ip: string): void {
    try {
      this.in(this.node, ["conntrack", "-D", "-p", "tcp", "--orig-dst", ip, "--state", "SYN_SENT"]);
    } catch (err) {
      // conntrack exits 1 when nothing matched.
      if (!/0 flow entries have been deleted/.test(String((err as { stderr?: string }).stderr))) throw err;
    }
  }

  /**
   * What the node's kernel holds, for a failure message: its TCP conntrack entries and every ruleset (an
   * unexpected answer, such as a refused connection, is explained by one of them).
   */
  kernelState(): string {
    const read = (args: readonly string[]) => {
      try {
        return this.in(this.node, args);
      } catch (err) {
        return `(${args.join(" ")} failed: ${(err as Error).message.split("\n")[0]})`;
      }
    };
    return [
      "conntrack -L -p tcp:",
      read(["conntrack", "-L", "-p", "tcp"]),
      "nft list ruleset:",
      read(["nft", "list", "ruleset"]),
      "iptables-legacy-save:",
      read(["iptables-legacy-save"]),
    ].join("\n");
  }

  async build(podIPs: readonly string[]): Promise<void> {
    this.#refuseTakenHostNetwork();
    const n = this.node;
    this.#netns(n, this.nodePid);
    this.#netns(this.client);
    this.in(n, ["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    sh(["ip", "-n", n, "link", "add", "br0", "type", "bridge"]);
    sh(["ip", "-n", n, "addr", "add", `${BRIDGE_IP}/24`, "dev", "br0"]);
    sh(["ip", "-n", n, "link", "set", "br0", "up"]);
    sh(["ip", "-n", n, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", this.client]);
    sh(["ip", "-n", n, "addr", "add", `${NODE_IP}/24`, "dev", "eth0"]);
    sh(["ip", "-n", n, "link", "set", "eth0", "up"]);
    sh(["ip", "-n", this.client, "addr", "add", `${CLIENT_IP}/24`, "dev", "eth0"]);
    sh(["ip", "-n", this.client, "link", "set", "eth0", "up"]);
    sh(["ip", "-n", this.client, "route", "add", "10.96.0.0/16", "via", NODE_IP]);
    sh(["ip", "-n", n, "route", "add", "default", "via", CLIENT_IP]);
    // Routing back out eth0 would send ICMP redirects and use up the rate limit REJECT needs.
    for (const dev of ["all", "eth0"]) this.in(n, ["sysctl", "-qw", `net.ipv4.conf.${dev}.send_redirects=0`]);
    sh(["ip", "link", "add", this.#hostLink, "type", "veth", "peer", "name", "api0", "netns", n]);
    sh(["ip", "addr", "add", `${this.hostIP}/30`, "dev", this.#hostLink]);
    sh(["ip", "link", "set", this.#hostLink, "up"]);
    sh(["ip", "-n", n, "addr", "add", `${this.apiIP}/30`, "dev", "api0"]);
    sh(["ip", "-n", n, "link", "set", "api0", "up"]);
    for (const [i, ip] of podIPs.entries()) {
      const pod = { name: `pod-${i}`, ip, ns: `${this.prefix}-p${i}` };
      this.#netns(pod.ns);
      sh(["ip", "-n", n, "link", "add", `veth${i}`, "type", "veth", "peer", "name", "eth0", "netns", pod.ns]);
      sh(["ip", "-n", n, "link", "set", `veth${i}`, "master", "br0", "up"]);
      sh(["ip", "-n", pod.ns, "addr", "add", `${ip}/24`, "dev", "eth0"]);
      sh(["ip", "-n", pod.ns, "link", "set", "eth0", "up"]);
      sh(["ip", "-n", pod.ns, "route", "add", "default", "via", BRIDGE_IP]);
      const child = spawn("ip", ["netns", "exec", pod.ns, process.execPath, "-e", SERVER, pod.name], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      this.#children.push(child);
      await once(child.stdout, "data");
      this.pods.push(pod);
    }
  }

  /**
   * A host outside the pod network, routed from the node over its own veth and answering like
   * a pod (as `name`): an address the node forwards to unless a rule drops it.
   */
  async addHost(name: string, ip: string): Promise<void> {
    const i = this.#hosts++;
    const ns = `${this.prefix}-x${i}`;
    const gateway = `169.254.99.${i + 1}`;
    this.#netns(ns);
    sh(["ip", "-n", this.node, "link", "add", `vx${i}`, "type", "veth", "peer", "name", "eth0", "netns", ns]);
    sh(["ip", "-n", this.node, "addr", "add", `${gateway}/32`, "dev", `vx${i}`]);
    sh(["ip", "-n", this.node, "link", "set", `vx${i}`, "up"]);
    sh(["ip", "-n", this.node, "route", "add", `${ip}/32`, "dev", `vx${i}`]);
    sh(["ip", "-n", ns, "addr", "add", `${ip}/32`, "dev", "eth0"]);
    sh(["ip", "-n", ns, "link", "set", "eth0", "up"]);
    sh(["ip", "-n", ns, "route", "add", gateway, "dev", "eth0"]);
    sh(["ip", "-n", ns, "route", "add", "default", "via", gateway]);
    const child = spawn("ip", ["netns", "exec", ns, process.execPath, "-e", SERVER, name], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.#children.push(child);
    await once(child.stdout, "data");
  }

  /** A kubeconfig that reaches `server` from the node namespace through a forwarder on the host veth. */
  async kubeconfigFor(kubeconfigPath: string, server: string): Promise<string> {
    const target = new URL(server);
    this.#forwarder = createServer((c) => {
      const link = { upstream: "connecting", toApiserver: 0, fromApiserver: 0, error: "" };
      this.#links.push(link);
      const up = connect(Number(target.port), target.hostname, () => {
        link.upstream = `connected from :${up.localPort}`;
      });
      c.on("data", (d: Buffer) => (link.toApiserver += d.length));
      up.on("data", (d: Buffer) => (link.fromApiserver += d.length));
      c.pipe(up).pipe(c);
      const close = (err?: Error) => {
        if (err && !link.error) link.error = err.message;
        c.destroy();
        up.destroy();
      };
      c.on("error", close);
      up.on("error", close);
    });
    await new Promise<void>((r) => this.#forwarder?.listen(0, this.hostIP, r));
    const port = (this.#forwarder.address() as { port: number }).port;
    const text = readFileSync(kubeconfigPath, "utf8").replace(
      /^(\s*)server: .*$/m,
      (_m, indent: string) =>
        `${indent}server: https://${this.hostIP}:${port}\n${indent}tls-server-name: 127.0.0.1`,
    );
    const path = join(mkdtempSync(join(tmpdir(), "sy-proxy-")), "kubeconfig");
    writeFileSync(path, text);
    return path;
  }

  /**
   * For a failure's message: whether a TCP connect from the node reaches kubeconfigFor's forwarder within 2 s
   * ("connected", else the error), with the node's route to it and the host's nftables tables, so a proxy that hears
   * nothing from the apiserver shows which hop is silent.
   */
  forwarderReach(): string {
    const address = this.#forwarder?.address();
    if (!address || typeof address === "string") return "no forwarder";
    const attempt = (args: readonly string[]) => {
      try {
        return sh(args).trim() || "(nothing printed)";
      } catch (err) {
        return `failed: ${String((err as { stderr?: string }).stderr ?? err)
          .trim()
          .slice(0, 200)}`;
      }
    };
    const target = `/dev/tcp/${this.hostIP}/${address.port}`;
    const connect = attempt([
      "ip",
      "netns",
      "exec",
      this.node,
      "timeout",
      "2",
      "bash",
      "-c",
      `exec 3<>${target}`,
    ]);
    return [
      `connect node -> ${this.hostIP}:${address.port}: ${connect === "(nothing printed)" ? "connected" : connect}`,
      `route: ${attempt(["ip", "-n", this.node, "route", "get", this.hostIP])}`,
      `host route back: ${attempt(["ip", "route", "get", this.apiIP])}`,
      `host nft tables: ${attempt(["nft", "list", "tables"]).replace(/\n/g, "; ")}`,
      `forwarder connections (last 8 of ${this.#links.length}): ${JSON.stringify(this.#links.slice(-8))}`,
    ].join("\n");
  }

  /** Connects `count` times from `ns` (the client by default); answers or error codes. */
  async probe(
    host: string,
    port: number,
    count: number,
    ns = this.client,
    timeoutMs = 1500,
  ): Promise<string[]> {
    const out = await shAsync([
      "ip",
      "netns",
      "exec",
      ns,
      process.execPath,
      "-e",
      PROBE,
      host,
      String(port),
      String(count),
      String(timeoutMs),
    ]);
    return JSON.parse(out) as string[];
  }

  /**
   * probe, from a process that joins the cgroup2 directory `cgroup` before it enters `ns` (so `ip netns exec`'s
   * private /sys does not hide the cgroup's path): ebpf mode balances the sockets of that cgroup's processes.
   */
  async probeInCgroup(
    cgroup: string,
    host: string,
    port: number,
    count: number,
    ns = this.node,
  ): Promise<string[]> {
    const out = await shAsync([
      "sh",
      "-c",
      IN_CGROUP,
      cgroup,
      "ip",
      "netns",
      "exec",
      ns,
      process.execPath,
      "-e",
      PROBE,
      host,
      String(port),
      String(count),
      "1500",
    ]);
    return JSON.parse(out) as string[];
  }

  /**
   * Connects in a loop until stopped, `pauseMs` apart; resolves to every answer. Without the pause a loop opens
   * thousands of connections a second and reuses client ports while the pods still hold them in TIME_WAIT, which
   * loses a SYN now and then with no proxy change at all (1 of 18092 in iptables mode, 3 of 4621 in nftables,
   * measured 2026-12-02 on a proxy left alone for 6 s).
   */
  probeLoop(
    host: string,
    port: number,
    ns = this.client,
    pauseMs = 5,
    cgroup?: string,
  ): { stop(): Promise<string[]> } {
    const probe = [
      "netns",
      "exec",
      ns,
      process.execPath,
      "-e",
      PROBE,
      host,
      String(port),
      "0",
      "1000",
      String(pauseMs),
    ];
    // In `cgroup` (see probeInCgroup): the loop's sockets are then balanced by ebpf mode's programs there.
    const [command, ...args] =
      cgroup === undefined ? ["ip", ...probe] : ["sh", "-c", IN_CGROUP, cgroup, "ip", ...probe];
    const child = spawn(command as string, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    return {
      async stop() {
        const done = once(child, "exit");
        child.kill("SIGTERM");
        await done;
        return JSON.parse(out) as string[];
      },
    };
  }

  async destroy(): Promise<void> {
    for (const c of this.#children) {
      if (c.exitCode === null) {
        c.kill("SIGKILL");
        await once(c, "exit").catch(() => {});
      }
    }
    await new Promise((r) => (this.#forwarder ? this.#forwarder.close(r) : r(undefined)));
    for (const ns of this.#namespaces.reverse()) {
      try {
        sh(["ip", "netns", "del", ns]);
      } catch {
        // already gone
      }
    }
    try {
      sh(["ip", "link", "del", this.#hostLink]);
    } catch {
      // went with the namespace
    }
  }
}

export interface ProxyRun {
  readonly child: ChildProcess;
  readonly logPath: string;
  log(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts switchyard-proxy (from source, through tsx) inside `ns`; `wrap` is a command that
 * runs its arguments, e.g. to start the proxy in a private mount namespace.
 */
export function startProxy(
  ns: string,
  args: readonly string[],
  env: Record<string, string> = {},
  wrap: readonly string[] = [],
  enter: "ip-netns-exec" | "nsenter" = "ip-netns-exec",
): ProxyRun {
  const logPath = join(mkdtempSync(join(tmpdir(), "sy-proxy-log-")), "proxy.log");
  const fd = openSync(logPath, "w");
  // nsenter joins the network namespace only: `ip netns exec` mounts a private /sys, which hides the cgroup2
  // and BPF file systems ebpf mode works in.
  const [command, ...entering] =
    enter === "nsenter" ? ["nsenter", `--net=/run/netns/${ns}`] : ["ip", "netns", "exec", ns];
  const child = spawn(
    command as string,
    [
      ...entering,
      ...wrap,
      process.execPath,
      "--import",
      "tsx",
      join(APP_DIR, "test", "run-proxy.ts"),
      ...args,
    ],
    { stdio: ["ignore", fd, fd], cwd: APP_DIR, env: { ...process.env, ...env } },
  );
  return {
    child,
    logPath,
    log: () => readFileSync(logPath, "utf8"),
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
      return child.exitCode;
    },
  };
}

export const names = (answers: readonly string[]) => new Set(answers.map((a) => a.split(" ")[0]));

// A throwaway network in namespaces, for tests against the real kernel. Everything lives in
// namespaces this process creates (links are created inside them, never in the host's
// namespace) and is removed again by destroy(), which also runs when setup fails halfway.
//
//   client ns                node ns                              pod ns (one per pod)
//   eth0 192.168.0.3/24 ---- eth0 192.168.0.2/24 (NODE_IP)
//                            br0  10.180.0.254/24 ---- vethX ---- eth0 10.180.0.N/24
//
// The client routes the service CIDR (172.30.0.0/16) via the node; pods default-route via br0;
// the node default-routes via the client. Every link is dual-stack: each IPv4 address a.b.0.d has its
// IPv6 twin fd00:a:b::d (/64; the fixtures' plan), so the same tests run in ip6 tables.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { type Exec, inNetns, realExec } from "../../src/apply/exec.js";

export const CLIENT_IP = "192.168.0.3";
export const NODE_BRIDGE_IP = "10.180.0.254";

/** The IPv6 twin of one of the plan's IPv4 addresses: a.b.0.d is fd00:a:b::d. */
export function ipv6Twin(ipv4: string): string {
  const [a, b, c, d] = ipv4.split(".");
  if (c !== "0") throw new Error(`${ipv4}: the plan's addresses are a.b.0.d`);
  return `fd00:${a}:${b}::${d}`;
}

/** The address of the plan for a family: the IPv4 one, or its IPv6 twin. */
export const inFamily = (family: "IPv4" | "IPv6", ipv4: string) =>
  family === "IPv6" ? ipv6Twin(ipv4) : ipv4;

export interface Pod {
  readonly name: string;
  readonly ip: string;
  readonly netns: string;
}

export interface ProbeResult {
  /** The pod name that answered, or the error code (ECONNREFUSED, ETIMEDOUT, ...). */
  readonly answers: string[];
}

async function must(exec: Exec, cmd: string, args: string[]): Promise<void> {
  const r = await exec(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr.trim()}`);
}

/** Why real-kernel tests cannot run here, or null when they can. */
export async function kernelTestsUnavailable(tools: readonly string[] = ["nft"]): Promise<string | null> {
  if (process.getuid?.() !== 0) return "not running as root";
  for (const tool of ["ip", ...tools]) {
    const found = await realExec("sh", ["-c", `command -v ${tool}`]);
    if (found.code !== 0) return `${tool} is not installed`;
  }
  const probe = `sy-kt-probe-${process.pid}`;
  const add = await realExec("ip", ["netns", "add", probe]);
  if (add.code !== 0) return `cannot create network namespaces: ${add.stderr.trim()}`;
  await realExec("ip", ["netns", "del", probe]);
  return null;
}

// Per-node script: one TCP server (and one UDP echo) that answers with the pod's name.
const SERVER = `
const name = process.argv[1];
const net = require("node:net");
const dgram = require("node:dgram");
const tcp = net.createServer((s) => s.end(name));
// "::" without ipv6Only takes IPv4 too (as ::ffff:a.b.c.d), so one socket serves both families.
const udp = dgram.createSocket({ type: "udp6", ipv6Only: false });
udp.on("message", (m, r) => udp.send(name, r.port, r.address));
udp.bind(80, "::", () => tcp.listen(80, "::", () => console.log("ready")));
`;

// Connects `count` times and prints a JSON list of answers (pod names or error codes).
const PROBE = `
const [host, port, count, proto, sport] = [process.argv[1], +process.argv[2], +process.argv[3], process.argv[4], +process.argv[5]];
const net = require("node:net");
const dgram = require("node:dgram");
function tcp() {
  return new Promise((resolve) => {
    let data = "";
    const s = net.connect({ host, port });
    s.setTimeout(1500, () => { s.destroy(); resolve("ETIMEDOUT"); });
    s.on("data", (d) => (data += d));
    s.on("end", () => resolve(data));
    s.on("error", (e) => resolve(e.code ?? String(e)));
  });
}
function udp() {
  return new Promise((resolve) => {
    const s = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
    const t = setTimeout(() => { s.close(); resolve("ETIMEDOUT"); }, 1500);
    s.on("message", (m) => { clearTimeout(t); s.close(); resolve(String(m)); });
    s.on("error", (e) => { clearTimeout(t); s.close(); resolve(e.code ?? String(e)); });
    // A fixed source port keeps every datagram in one conntrack flow.
    s.bind(sport || 0, () => s.send("hi", port, host));
  });
}
(async () => {
  const out = [];
  for (let i = 0; i < count; i++) out.push(await (proto === "udp" ? udp() : tcp()));
  console.log(JSON.stringify(out));
})();
`;

export class Topology {
  readonly prefix: string;
  readonly node: string;
  readonly client: string;
  readonly pods: Pod[] = [];
  readonly #namespaces: string[] = [];
  readonly #servers: ChildProcess[] = [];

  private constructor(prefix: string) {
    this.prefix = prefix;
    this.node = `${prefix}-node`;
    this.client = `${prefix}-client`;
  }

  /** Exec inside the node namespace (where kube-proxy's rules go). */
  get nodeExec(): Exec {
    return inNetns(this.node, realExec);
  }

  static async create(prefix: string, podIPs: readonly string[], nodeIP = "192.168.0.2"): Promise<Topology> {
    const t = new Topology(prefix);
    try {
      await t.#build(podIPs, nodeIP);
    } catch (e) {
      await t.destroy();
      throw e;
    }
    return t;
  }

  async #addNetns(name: string): Promise<void> {
    await must(realExec, "ip", ["netns", "add", name]);
    this.#namespaces.push(name);
    await must(realExec, "ip", ["-n", name, "link", "set", "lo", "up"]);
  }

  /** Both addresses on a link: the IPv4 one and its twin (no duplicate address detection, so it is usable at once). */
  async #addAddresses(netns: string, dev: string, ipv4: string, prefix: number): Promise<void> {
    await must(realExec, "ip", ["-n", netns, "addr", "add", `${ipv4}/${prefix}`, "dev", dev]);
    await must(realExec, "ip", ["-n", netns, "addr", "add", `${ipv6Twin(ipv4)}/64`, "dev", dev, "nodad"]);
  }

  async #sysctl(netns: string, setting: string): Promise<void> {
    await must(realExec, "ip", ["netns", "exec", netns, "sysctl", "-qw", setting]);
  }

  async #route(netns: string, dst: string, via: string): Promise<void> {
    await must(realExec, "ip", ["-n", netns, "route", "add", dst, "via", via]);
    const dst6 = dst === "default" ? "default" : `${ipv6Twin(dst.split("/")[0] ?? "")}/64`;
    await must(realExec, "ip", ["-n", netns, "-6", "route", "add", dst6, "via", ipv6Twin(via)]);
  }

  async #build(podIPs: readonly string[], nodeIP: string): Promise<void> {
    const n = this.node;
    await this.#addNetns(n);
    await this.#addNetns(this.client);
    await this.#sysctl(n, "net.ipv4.ip_forward=1");
    await this.#sysctl(n, "net.ipv6.conf.all.forwarding=1");
    // REJECT's ICMPv6 errors are rate-limited per destination (1 s by default); the tests send many.
    await this.#sysctl(n, "net.ipv6.icmp.ratelimit=0");
    await must(realExec, "ip", ["-n", n, "link", "add", "br0", "type", "bridge"]);
    await this.#addAddresses(n, "br0", NODE_BRIDGE_IP, 24);
    await must(realExec, "ip", ["-n", n, "link", "set", "br0", "up"]);

    const c = this.client;
    await must(realExec, "ip", [
      "-n",
      n,
      "link",
      "add",
      "eth0",
      "type",
      "veth",
      "peer",
      "name",
      "eth0",
      "netns",
      c,
    ]);
    await this.#addAddresses(n, "eth0", nodeIP, 24);
    await must(realExec, "ip", ["-n", n, "link", "set", "eth0", "up"]);
    await this.#addAddresses(c, "eth0", CLIENT_IP, 24);
    await must(realExec, "ip", ["-n", c, "link", "set", "eth0", "up"]);
    await this.#route(c, "172.30.0.0/16", nodeIP);
    // Like a real node, this one has a default route (the client stands in for the upstream
    // router), so service traffic reaches the forward and output hooks instead of failing the
    // route lookup first. Routing back out eth0 would make the node send ICMP redirects, which
    // use up the ICMP rate limit that REJECT's port-unreachable needs, so they are turned off.
    await this.#route(n, "default", CLIENT_IP);
    for (const dev of ["all", "eth0"]) await this.#sysctl(n, `net.ipv4.conf.${dev}.send_redirects=0`);

    for (const [i, ip] of podIPs.entries()) {
      const pod: Pod = { name: `pod-${i}`, ip, netns: `${this.prefix}-pod${i}` };
      await this.#addNetns(pod.netns);
      const veth = `veth${i}`;
      await must(realExec, "ip", [
        "-n",
        n,
        "link",
        "add",
        veth,
        "type",
        "veth",
        "peer",
        "name",
        "eth0",
        "netns",
        pod.netns,
      ]);
      await must(realExec, "ip", ["-n", n, "link", "set", veth, "master", "br0", "up"]);
      // As CNI bridge plugins do (hairpinMode): when br_netfilter is loaded, a pod's connection
      // DNATed back to itself is bridged out of the port it came in on, which needs hairpin.
      await must(realExec, "ip", ["-n", n, "link", "set", veth, "type", "bridge_slave", "hairpin", "on"]);
      await this.#addAddresses(pod.netns, "eth0", ip, 24);
      await must(realExec, "ip", ["-n", pod.netns, "link", "set", "eth0", "up"]);
      await this.#route(pod.netns, "default", NODE_BRIDGE_IP);
      await this.#startServer(pod);
      this.pods.push(pod);
    }
  }

  async #startServer(pod: Pod): Promise<void> {
    const child = spawn("ip", ["netns", "exec", pod.netns, process.execPath, "-e", SERVER, pod.name], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.#servers.push(child);
    const [chunk] = (await Promise.race([
      once(child.stdout, "data"),
      once(child, "exit").then(() => {
        throw new Error(`server in ${pod.netns} exited before it was ready`);
      }),
    ])) as [Buffer];
    if (!String(chunk).includes("ready")) throw new Error(`server in ${pod.netns}: ${String(chunk)}`);
  }

  /** Connects `count` times from `netns` (the client by default) and returns who answered. */
  async probe(
    host: string,
    port: number,
    count: number,
    opts: { netns?: string; udp?: boolean; sourcePort?: number } = {},
  ) {
    const ns = opts.netns ?? this.client;
    const r = await realExec("ip", [
      "netns",
      "exec",
      ns,
      process.execPath,
      "-e",
      PROBE,
      host,
      String(port),
      String(count),
      opts.udp ? "udp" : "tcp",
      String(opts.sourcePort ?? 0),
    ]);
    if (r.code !== 0) throw new Error(`probe failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as string[];
  }

  async destroy(): Promise<void> {
    for (const child of this.#servers) {
      if (child.exitCode === null && child.pid !== undefined) {
        child.kill("SIGKILL");
        await once(child, "exit").catch(() => {});
      }
    }
    for (const ns of this.#namespaces.reverse()) await realExec("ip", ["netns", "del", ns]);
    this.#namespaces.length = 0;
  }
}

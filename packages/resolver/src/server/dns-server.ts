import * as dgram from "node:dgram";
import * as dns from "node:dns";
import * as net from "node:net";
import type { Peer } from "../plugin/handler.js";
import type { ServerSettings } from "../plugin/server-settings.js";
import type { Transport } from "../wire/edns.js";
import { peekQuery } from "../wire/peek.js";
import type { Outcome, Site } from "./dispatch.js";
import { dispatch, notifyObservers } from "./dispatch.js";
import { answerFast } from "./fast-path.js";
import { listenError } from "./listen-error.js";
import { relayFast } from "./relay.js";
import { TcpConnection, type TcpHost, type TcpLimits } from "./tcp-connection.js";
import type { Timers } from "./timers.js";
import { systemTimers } from "./timers.js";

/** How the server reaches the network; tests may hand in their own sockets. */
export interface Network {
  createUdpSocket(family: "udp4" | "udp6"): dgram.Socket;
  createTcpServer(): net.Server;
}

/**
 * The kernel's default receive buffer (about 200 KiB) holds only some hundred queries; one JavaScript
 * thread off the CPU for a few milliseconds under load overflows it and loses queries. The kernel caps
 * this at net.core.rmem_max.
 */
const UDP_RECEIVE_BUFFER = 4 * 1024 * 1024;

/**
 * dgram passes the address of every send through dns.lookup, which answers an IP address a tick later;
 * a client's address is always one, so it is used at once (names still go to dns.lookup).
 */
export function addressLookup(
  address: string,
  family: number,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  const literal = literalFamily(address);
  if (literal !== 0) callback(null, address, literal);
  else dns.lookup(address, family, callback);
}

/**
 * The family of an address as the kernel reports a peer's (rinfo), without net.isIP's regular expressions,
 * which cost 3% of a cached answer on the dual-stack socket: a name never holds a colon, so text with one is
 * IPv6 (an invalid one fails in the send, as a name would in the lookup), and four dotted numbers of 0-255
 * without leading zeros are IPv4. Anything else takes net.isIP's answer.
 */
export function literalFamily(address: string): 0 | 4 | 6 {
  if (address.includes(":")) return 6;
  let dots = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 0x2e && digits > 0) {
      dots++;
      digits = 0;
      value = 0;
    } else if (c >= 0x30 && c <= 0x39 && !(digits === 1 && value === 0)) {
      value = value * 10 + (c - 0x30);
      digits++;
      if (value > 255) return net.isIP(address) as 0 | 4 | 6;
    } else return net.isIP(address) as 0 | 4 | 6;
  }
  return dots === 3 && digits > 0 ? 4 : (net.isIP(address) as 0 | 4 | 6);
}

const nodeNetwork: Network = {
  createUdpSocket: (family) =>
    dgram.createSocket({
      type: family,
      reuseAddr: false,
      recvBufferSize: UDP_RECEIVE_BUFFER,
      lookup: addressLookup as NonNullable<dgram.SocketOptions["lookup"]>,
    }),
  // Half-open: a client that sends its queries and then its FIN still gets every reply (the connection
  // closes once they are out), as from CoreDNS; Node would otherwise end our side at the client's FIN.
  createTcpServer: () => net.createServer({ pauseOnConnect: false, allowHalfOpen: true }),
};

export interface DnsServerOptions {
  sites: readonly Site[];
  /**
   * Address to bind. Default: every address of both families, as CoreDNS's Go listener binds `.:53` (one
   * IPv6 socket that takes IPv4 too); only IPv4's where the kernel has no IPv6.
   */
  address?: string;
  /** Port for both UDP and TCP; 0 picks a free one (the same for both). Default 53. */
  port?: number;
  /** How long a new TCP connection may take to send its first whole query; CoreDNS's default, 3 s. */
  tcpFirstReadTimeoutMs?: number;
  /** ... and each later one, from the previous reply on; 10 s. */
  tcpIdleTimeoutMs?: number;
  /** How long a TCP reply may wait for the kernel to take it before the connection is dropped; 5 s. */
  tcpWriteTimeoutMs?: number;
  /**
   * TCP connections open at once (default 1000). A new one beyond this takes the place of the connection
   * that has waited longest for a query (or is closing); when every connection is busy answering, it is
   * closed at once.
   */
  maxTcpConnections?: number;
  /** What the Corefile's `debug` and `timeouts` set; these win over the options above. */
  settings?: ServerSettings;
  timers?: Timers;
  network?: Network;
  /** Called once per packet after its reply (if any) was sent. */
  onOutcome?: (outcome: Outcome, transport: Transport, remote: Peer) => void;
  /** Where a chain's exception is logged; standard error when unset. */
  log?: (line: string) => void;
}

/**
 * A DNS server on UDP and TCP. TCP queries on one connection are answered one at a time in arrival order
 * (as miekg/dns does), so pipelined clients get their replies in the order they asked (tcp-connection.ts).
 */
export class DnsServer {
  private udp: dgram.Socket | undefined;
  private tcp: net.Server | undefined;
  private readonly connections = new Set<TcpConnection>();
  /**
   * Connections waiting for a query or closing, in the order they became so: the ones given up, first
   * first, when the cap is reached.
   */
  private readonly evictable = new Set<TcpConnection>();
  /** Queries whose reply is not written yet, and who waits for there to be none (stop). */
  private inflight = 0;
  private idle: (() => void) | undefined;
  private stopping = false;
  private boundPort = 0;
  private boundAddress = "";
  private labelPort = -1;
  private labelText = "";
  private readonly timers: Timers;
  private readonly network: Network;
  private sites: readonly Site[];
  private settings: ServerSettings;

  constructor(private readonly options: DnsServerOptions) {
    this.timers = options.timers ?? systemTimers;
    this.network = options.network ?? nodeNetwork;
    this.sites = options.sites;
    this.settings = options.settings ?? {};
  }

  /**
   * Swaps the chains in place: queries already running finish on the old ones, new ones use these. New
   * settings apply to connections accepted from now on.
   */
  replaceSites(sites: readonly Site[], settings?: ServerSettings): void {
    this.sites = sites;
    if (settings) this.settings = settings;
  }

  /** CoreDNS's defaults (its NewServer), then the options, then the Corefile's `timeouts`. */
  private get tcpLimits(): TcpLimits {
    const { settings, options } = this;
    return {
      firstReadMs: settings.tcpReadTimeoutMs ?? options.tcpFirstReadTimeoutMs ?? 3000,
      idleMs: settings.tcpIdleTimeoutMs ?? options.tcpIdleTimeoutMs ?? 10_000,
      writeMs: settings.tcpWriteTimeoutMs ?? options.tcpWriteTimeoutMs ?? 5000,
      maxQueries: settings.tcpMaxQueries ?? -1,
    };
  }

  get address(): { address: string; port: number } {
    return { address: this.boundAddress, port: this.boundPort };
  }

  /** The label CoreDNS gives this server in metrics: `dns://:53`, or with the bind address. */
  get label(): string {
    // Every packet needs it: built once per port.
    if (this.labelPort !== this.boundPort) {
      const host = this.options.address ?? "";
      // As Go's net.JoinHostPort writes it: an IPv6 address in brackets.
      this.labelText = `dns://${host.includes(":") ? `[${host}]` : host}:${this.boundPort}`;
      this.labelPort = this.boundPort;
    }
    return this.labelText;
  }

  async start(): Promise<void> {
    if (this.options.address !== undefined) return this.listen(this.options.address);
    try {
      await this.listen("::");
    } catch (err) {
      // A kernel without IPv6 (ipv6.disable=1) has no AF_INET6 sockets at all.
      if ((err as NodeJS.ErrnoException).code !== "EAFNOSUPPORT") throw err;
      await this.listen("0.0.0.0");
    }
  }

  private async listen(address: string): Promise<void> {
    const family = net.isIPv6(address) ? "udp6" : "udp4";
    const wanted = this.options.port ?? 53;
    // With port 0 the kernel picks the UDP port; TCP then asks for the same one, which can be taken.
    for (let attempt = 0; ; attempt++) {
      const udp = this.network.createUdpSocket(family);
      // Listen before binding: a socket shared by node:cluster workers receives as soon as it is bound,
      // and a datagram read with no listener yet would be lost.
      udp.on("message", (packet, rinfo) => this.onUdp(udp, packet, rinfo));
      // Errors name the address as the Corefile gave it, as CoreDNS's do (`listen udp :53: ...`).
      const named = this.options.address ?? "";
      const port = await bindUdp(udp, address, wanted).catch((err: NodeJS.ErrnoException) => {
        udp.close();
        throw listenError("udp", named, wanted, err);
      });
      this.boundPort = port;
      try {
        this.tcp = await listenTcp(this.network.createTcpServer(), address, port);
        this.udp = udp;
        this.boundAddress = address;
        break;
      } catch (err) {
        udp.close();
        if (wanted !== 0 || attempt >= 5) throw listenError("tcp", named, port, err as NodeJS.ErrnoException);
      }
    }
    // Send failures (an ICMP unreachable, a client gone) concern one packet and must not end the server.
    this.udp.on("error", () => undefined);
    this.tcp.on("connection", (socket) => this.onTcp(socket));
  }

  /**
   * Stops taking new queries, lets the ones in flight finish (at most `graceMs`), then closes every
   * socket. TCP connections without pending queries close at once.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const tcpClosed = this.tcp ? new Promise<void>((resolve) => this.tcp?.close(() => resolve())) : undefined;
    for (const conn of this.connections) if (conn.idle) conn.finish();
    let handle: unknown;
    const grace = new Promise<void>((resolve) => {
      handle = this.timers.setTimeout(resolve, graceMs);
    });
    // Replies are sent when their query settles; a send the kernel did not take at once waits in the
    // socket's queue, which is watched once every query has settled.
    let waiting = true;
    const sent = () =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!waiting || (this.udp?.getSendQueueCount() ?? 0) === 0) resolve();
          else this.timers.setTimeout(check, 5);
        };
        check();
      });
    const settled = new Promise<void>((resolve) => {
      this.idle = resolve;
      if (this.inflight === 0) resolve();
    });
    await Promise.race([settled.then(sent), grace]);
    waiting = false;
    this.timers.clearTimeout(handle);
    for (const conn of this.connections) conn.drop();
    this.udp?.close();
    await tcpClosed;
  }

  private onUdp(udp: dgram.Socket, packet: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.stopping) return;
    const server = this.label;
    const q = peekQuery(packet);
    const fast = q && answerFast(packet, this.sites, server, "udp", q);
    if (fast) {
      this.sendUdp(udp, fast, rinfo);
      return;
    }
    const remote = peerOf(rinfo.address, rinfo.port, rinfo.family);
    const recover = !this.settings.debug;
    const relayed = q && relayFast(q, { sites: this.sites, server, remote, recover });
    const work =
      relayed ||
      dispatch(packet, {
        sites: this.sites,
        server,
        transport: "udp",
        remote,
        recover,
        anyClass: this.settings.anyClass === true,
      });
    this.track(work.then((out) => this.sendUdp(udp, out, rinfo, remote)));
  }

  /** Sends a UDP reply and reports it; stop() waits for these sends as it waits for dispatches. */
  private sendUdp(udp: dgram.Socket, out: Outcome, rinfo: dgram.RemoteInfo, peer?: Peer): void {
    // No callback: Node would queue one per reply, and stop() reads the send queue instead.
    if (out.reply) udp.send(out.reply, rinfo.port, rinfo.address);
    const remote = peer ?? peerOf(rinfo.address, rinfo.port, rinfo.family);
    this.report(out, "udp", remote);
  }

  private onTcp(socket: net.Socket): void {
    if (this.stopping || !this.roomForOneMore()) {
      socket.destroy();
      return;
    }
    const remote = peerOf(socket.remoteAddress ?? "", socket.remotePort ?? 0, socket.remoteFamily);
    const recover = !this.settings.debug;
    const host: TcpHost = {
      timers: this.timers,
      answer: (packet) =>
        dispatch(packet, {
          sites: this.sites,
          server: this.label,
          transport: "tcp",
          remote,
          recover,
          anyClass: this.settings.anyClass === true,
        }),
      report: (out) => this.report(out, "tcp", remote),
      track: (work) => this.track(work),
      stopping: () => this.stopping,
      evictable: (conn, yes) => {
        if (yes) this.evictable.add(conn);
        else this.evictable.delete(conn);
      },
      closed: (conn) => this.forget(conn),
    };
    this.connections.add(new TcpConnection(socket, this.tcpLimits, host));
  }

  /**
   * Whether a new connection may be served. At the cap, the connection that has waited longest for a query
   * (or is closing) is closed to make room (RFC 7766's security considerations allow closing idle
   * connections or refusing new ones), so clients that connect and then send nothing, or a byte now and
   * then, cannot lock out the others. CoreDNS has no cap; its goroutines cost less than our connections.
   */
  private roomForOneMore(): boolean {
    if (this.connections.size < (this.options.maxTcpConnections ?? 1000)) return true;
    const longest = this.evictable.values().next();
    if (longest.done) return false;
    this.forget(longest.value);
    longest.value.drop();
    return true;
  }

  private forget(conn: TcpConnection): void {
    this.connections.delete(conn);
    this.evictable.delete(conn);
  }

  /** After a reply went out: the embedder's hook, the observers, and the log line for a recovered exception. */
  private report(out: Outcome, transport: Transport, remote: Peer): void {
    if (out.panic) {
      // CoreDNS's recover() in ServeDNS: the server's name quoted, the panic's value, its stack on request.
      const stack = this.settings.stacktrace ? `\n${out.panic.stack ?? ""}` : "";
      const line = `[ERROR] Recovered from panic in server: ${JSON.stringify(this.label)} ${out.panic.message}${stack}`;
      (this.options.log ?? ((text: string) => console.error(text)))(line);
    }
    this.options.onOutcome?.(out, transport, remote);
    notifyObservers(out, this.sites, { server: this.label, transport, remote });
  }

  private track(work: Promise<void>): void {
    this.inflight++;
    // Handlers made once: a query costs one promise here, not a catch and a finally with closures.
    work.then(this.settled, this.crashed);
  }

  private readonly settled = (): void => {
    if (--this.inflight === 0) this.idle?.();
  };

  private readonly crashed = (err: unknown): void => {
    this.settled();
    // Under `debug` nothing recovers a crashed chain: thrown outside any promise, it ends the process
    // with its stack trace, as an unrecovered panic ends CoreDNS.
    if (this.settings.debug)
      queueMicrotask(() => {
        throw err;
      });
  };
}

/**
 * The client as plugins see it. On the dual-stack socket an IPv4 client arrives as ::ffff:a.b.c.d; Go's
 * listener reports it as the IPv4 address, so acl, log and whoami see what they see under CoreDNS. Replies
 * still go to the address the socket reported.
 */
export function peerOf(address: string, port: number, family: string | undefined): Peer {
  if (address.startsWith("::ffff:") && address.includes("."))
    return { address: address.slice(7), port, family: "IPv4" };
  return { address, port, family: family === "IPv6" ? "IPv6" : "IPv4" };
}

function bindUdp(socket: dgram.Socket, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, address, () => {
      socket.off("error", reject);
      resolve(socket.address().port);
    });
  });
}

function listenTcp(server: net.Server, address: string, port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, address, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

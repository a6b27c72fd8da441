/**
 * The lab's traffic generator (image `switchyard/loadgen`): in rounds, opens one TCP connection to each target and
 * reads the answer's first line, and resolves each name through the pod's nameserver; counts attempts and
 * failures and keeps the latest failures with their time. GET / on --stats-port answers the counters as JSON, so
 * a scenario can read them before and after a change and take the difference.
 * Flags: --tcp host:port (repeatable; names resolved once at start), --dns name (repeatable, fully qualified),
 * --dns-sockets per-lookup|shared (per-lookup: a new UDP socket for each lookup, as glibc, musl and Go clients do;
 * shared: Node's resolver, whose one socket keeps its conntrack entry and so its DNS pod), --interval-ms 100,
 * --timeout-ms 1000, --stats-port 8080.
 */
import { promises as dns } from "node:dns";
import { createServer } from "node:http";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { type LookupError, lookupOnce, podNameserver } from "./dns-lookup.js";
import { emptyLoadStats, type LoadFailure, recordFailure } from "./loadgen-stats.js";

const { values } = parseArgs({
  options: {
    tcp: { type: "string", multiple: true, default: [] },
    dns: { type: "string", multiple: true, default: [] },
    "interval-ms": { type: "string", default: "100" },
    "timeout-ms": { type: "string", default: "1000" },
    "stats-port": { type: "string", default: "8080" },
    "dns-sockets": { type: "string", default: "per-lookup" },
  },
});
const sockets = values["dns-sockets"];
if (sockets !== "per-lookup" && sockets !== "shared")
  throw new Error(`loadgen: --dns-sockets must be per-lookup or shared, not "${sockets}"`);
const timeoutMs = Number(values["timeout-ms"]);
const stats = emptyLoadStats(new Date().toISOString());
const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The pod's resolv.conf is written before its containers start and does not change: read once.
const nameserver = sockets === "per-lookup" ? podNameserver() : undefined;
if (sockets === "per-lookup" && !nameserver) throw new Error("loadgen: no nameserver in /etc/resolv.conf");

/** How long a timed-out lookup's socket keeps listening, so a late answer is told apart from none. */
const lateWindowMs = 3000;

function lookup(name: string, onLate: (ms: number) => void): Promise<unknown> {
  if (sockets === "shared" || !nameserver) return resolver.resolve4(name);
  return lookupOnce(nameserver, name, timeoutMs, 53, { windowMs: lateWindowMs, onLate });
}

function tcpOnce(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let data = "";
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(why));
    };
    socket.setTimeout(timeoutMs, () => fail(data ? "timed out mid-answer" : "timed out"));
    socket.on("data", (chunk) => {
      data += chunk.toString();
      if (data.includes("\n")) {
        socket.destroy();
        resolve();
      }
    });
    socket.on("end", () => (data ? resolve() : fail("closed without an answer")));
    socket.on("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
  });
}

/** host:port with the host resolved once (retrying until the name exists), so TCP failures are data-plane only. */
async function target(spec: string): Promise<{ spec: string; ip: string; port: number }> {
  const i = spec.lastIndexOf(":");
  const host = spec.slice(0, i);
  const port = Number(spec.slice(i + 1));
  for (;;) {
    try {
      const ip = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? host : ((await resolver.resolve4(host))[0] ?? "");
      if (ip) return { spec, ip, port };
    } catch {}
    await sleep(500);
  }
}

async function main(): Promise<void> {
  createServer((_req, res) => {
    stats.now = new Date().toISOString();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(stats));
  }).listen(Number(values["stats-port"]));
  const targets = await Promise.all((values.tcp ?? []).map(target));
  let stopped = false;
  process.on("SIGTERM", () => {
    stopped = true;
  });
  while (!stopped) {
    const at = () => new Date().toISOString();
    const fail = (f: LoadFailure) => recordFailure(stats, f);
    await Promise.all([
      ...targets.map(async (t) => {
        stats.tcp.attempts++;
        const sent = at();
        await tcpOnce(t.ip, t.port).catch((err: Error) =>
          fail({ at: sent, kind: "tcp", target: t.spec, error: err.message }),
        );
      }),
      ...(values.dns ?? []).map(async (name) => {
        stats.dns.attempts++;
        // Stamped when sent: a lookup that times out after a second was lost to where it went then.
        const sent = at();
        let failure: LoadFailure | undefined;
        let replyMs: number | undefined;
        const onLate = (ms: number) => {
          replyMs = ms;
          if (failure) failure.replyMs = ms;
        };
        await lookup(name, onLate).catch((err: NodeJS.ErrnoException & Partial<LookupError>) => {
          failure = {
            at: sent,
            kind: "dns",
            target: name,
            error: err.code ?? err.message,
            ...(err.sourcePort ? { port: err.sourcePort } : {}),
            ...(err.timerMs ? { timerMs: err.timerMs } : {}),
            ...(replyMs ? { replyMs } : {}),
          };
          fail(failure);
        });
      }),
    ]);
    stats.rounds++;
    await sleep(Number(values["interval-ms"]));
  }
  process.exit(0);
}

void main();

// What runs in the image-swap test's pods, as `node -e` scripts (the pods run one of our images, which has node).

/** An HTTP server on 8080 answering with the pod's name. */
export const webServer = `require("node:http").createServer((q, s) => s.end(require("node:os").hostname())).listen(8080);`;

/** The counters the traffic pod prints, one JSON line a second, from its start. */
export interface TrafficCounters {
  lookups: number;
  /** Lookups whose first query got no good answer within 2 s (a resolver would ask again). */
  lookupFirstTryFailed: number;
  /** Lookups that failed twice, the second query too: what an application sees (glibc's attempts:2). */
  lookupFailed: number;
  connections: number;
  /** HTTP requests to the Service's ClusterIP with no response within 3 s (connect included). */
  connectionFailed: number;
  /** The last few failures, with the time since the pod started. */
  errors: string[];
}

/**
 * Ten lookups and ten HTTP requests a second, each lookup from a new UDP socket (a new source port: a new
 * conntrack entry, as most resolvers make; one socket for all would stay pinned to one DNS pod) to the pod's
 * nameserver, for `name`'s A record, and each request to `clusterIp`:80. Prints TrafficCounters every second.
 */
export function trafficScript(name: string, clusterIp: string): string {
  return `
const dgram = require("node:dgram"), net = require("node:net"), fs = require("node:fs");
const server = /^nameserver\\s+(\\S+)/m.exec(fs.readFileSync("/etc/resolv.conf", "utf8"))[1];
const started = Date.now();
const c = { lookups: 0, lookupFirstTryFailed: 0, lookupFailed: 0, connections: 0, connectionFailed: 0, errors: [] };
const note = (what) => { c.errors.push(((Date.now() - started) / 1000).toFixed(1) + "s " + what); c.errors = c.errors.slice(-10); };
const question = Buffer.concat([...${JSON.stringify(name)}.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0, 0, 1, 0, 1])]);
function ask() {
  return new Promise((done) => {
    const id = Math.floor(Math.random() * 65536), s = dgram.createSocket("udp4");
    const header = Buffer.alloc(12); header.writeUInt16BE(id, 0); header.writeUInt16BE(0x0100, 2); header.writeUInt16BE(1, 4);
    const finish = (r) => { clearTimeout(timer); s.close(); done(r); };
    const timer = setTimeout(() => finish("timeout"), 2000);
    s.on("error", (e) => finish(e.code));
    s.on("message", (m) => {
      if (m.readUInt16BE(0) !== id) return;
      const rcode = m[3] & 15, answers = m.readUInt16BE(6);
      finish(rcode === 0 && answers > 0 ? "ok" : "rcode " + rcode + " answers " + answers);
    });
    s.send(Buffer.concat([header, question]), 53, server);
  });
}
async function lookup() {
  c.lookups++;
  const first = await ask();
  if (first === "ok") return;
  c.lookupFirstTryFailed++; note("lookup " + first);
  const again = await ask();
  if (again !== "ok") { c.lookupFailed++; note("lookup retry " + again); }
}
function request() {
  c.connections++;
  const s = net.connect({ host: ${JSON.stringify(clusterIp)}, port: 80 });
  let answered = false;
  const timer = setTimeout(() => s.destroy(new Error("timeout")), 3000);
  s.on("connect", () => s.write("GET / HTTP/1.0\\r\\n\\r\\n"));
  s.on("data", (d) => { answered ||= d.toString().startsWith("HTTP/1."); });
  s.on("error", (e) => { if (!answered) { answered = true; c.connectionFailed++; note("request " + (e.code || e.message)); } });
  s.on("close", () => { clearTimeout(timer); if (!answered) { answered = true; c.connectionFailed++; note("request closed unanswered"); } });
}
setInterval(() => { void lookup(); request(); }, 100);
setInterval(() => console.log(JSON.stringify(c)), 1000);
`;
}

/** The pod's last line of counters. */
export function lastCounters(logs: string): TrafficCounters | undefined {
  const line = logs.trim().split("\n").at(-1);
  return line?.startsWith("{") ? (JSON.parse(line) as TrafficCounters) : undefined;
}

/** The counters that grew from `before` to `after`: what happened in between. */
export function countersBetween(
  before: TrafficCounters,
  after: TrafficCounters,
): Omit<TrafficCounters, "errors"> {
  return {
    lookups: after.lookups - before.lookups,
    lookupFirstTryFailed: after.lookupFirstTryFailed - before.lookupFirstTryFailed,
    lookupFailed: after.lookupFailed - before.lookupFailed,
    connections: after.connections - before.connections,
    connectionFailed: after.connectionFailed - before.connectionFailed,
  };
}

/**
 * A one-shot probe: resolves `service` in the default namespace (its A record is one ClusterIP), then GETs it on
 * `port` every 500 ms until a web pod answers, at most 20 times. Prints {resolved, answer, tries}.
 */
export function newServiceScript(service: string, port: number): string {
  return `
const dns = require("node:dns").promises, http = require("node:http");
const get = (host) => new Promise((ok) => http.get({ host, port: ${port}, timeout: 3000 }, (r) => {
  let body = ""; r.on("data", (d) => (body += d)); r.on("end", () => ok(body.startsWith("web-") ? "web" : body));
}).on("error", (e) => ok(e.code)));
(async () => {
  const ips = await dns.resolve4(${JSON.stringify(`${service}.default.svc.cluster.local`)}).catch((e) => [e.code]);
  let answer, tries = 0;
  while (tries++ < 20 && (answer = await get(ips[0])) !== "web") await new Promise((r) => setTimeout(r, 500));
  console.log(JSON.stringify({ resolved: ips.length === 1 && ips[0].startsWith("10.96."), answer, tries }));
})();`;
}

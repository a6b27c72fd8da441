import assert from "node:assert/strict";
import * as dgram from "node:dgram";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { type App, freePort, httpStatus, nxdomainUpstream, query, startApp } from "../src/testing/process.js";

/** Sends `count` queries one after another from one socket; resolves with how many got their reply. */
async function ask(port: number, count: number): Promise<number> {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  let answered = 0;
  for (let id = 1; id <= count; id++) {
    const got = await new Promise<boolean>((resolve) => {
      // Longer than forward's 2 s read timeout, so one upstream retry does not count as a loss.
      const timer = setTimeout(() => done(false), 6000);
      const onMessage = (msg: Buffer) => {
        if (msg.length >= 12 && msg.readUInt16BE(0) === id) done(true);
      };
      const done = (ok: boolean) => {
        clearTimeout(timer);
        sock.off("message", onMessage);
        resolve(ok);
      };
      sock.on("message", onMessage);
      sock.send(query(id, `w${id % 7}.example.org`), port, "127.0.0.1");
    });
    if (got) answered++;
  }
  sock.close();
  return answered;
}

/**
 * Whether a UDP socket is bound to `port` (from /proc/net/udp*; the port is in hex). Without `bind` the server's
 * socket is one IPv6 socket that takes both families, as CoreDNS's is, so it is listed in udp6.
 */
function udpBound(port: number): boolean {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return ["/proc/net/udp", "/proc/net/udp6"].some((table) =>
    readFileSync(table, "utf8")
      .split("\n")
      .some((line) => line.trim().split(/\s+/)[1]?.endsWith(hex)),
  );
}

/** The sum of the series of `name` whose labels match `labels`, from a scrape. */
function sample(text: string, name: string, labels: RegExp, required = true): number {
  const lines = text.split("\n").filter((l) => l.startsWith(`${name}{`) && labels.test(l));
  if (required) assert.ok(lines.length > 0, `no ${name} series matching ${labels} in\n${text}`);
  return lines.reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

test("-workers 2: two processes share the sockets, metrics add up across them, SIGTERM ends all", {
  timeout: 60_000,
}, async () => {
  const upstream = await nxdomainUpstream();
  const [dnsPort, healthPort, readyPort, metricsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const app = startApp(
    `.:${dnsPort} {
    health 127.0.0.1:${healthPort} {
        lameduck 1s
    }
    ready 127.0.0.1:${readyPort}
    prometheus 127.0.0.1:${metricsPort}
    forward . 127.0.0.1:${upstream.port}
    cache 30
}
`,
    ["-workers", "2", "-pidfile", "dns.pid"],
  );
  try {
    await eventually(`/ready\n${app.output()}`, async () => (await httpStatus(readyPort, "/ready")) === 200, {
      timeoutMs: 20_000,
    });
    // /ready opens before the DNS socket is bound (startup hooks run first), and a worker binds it through
    // the primary, a round trip later; a query sent before that would meet a closed port.
    await eventually("the DNS socket", () => udpBound(dnsPort), { timeoutMs: 20_000 });
    const pid = Number(readFileSync(join(app.dir, "dns.pid"), "utf8"));
    assert.equal(pid, app.child.pid, "the primary writes the pidfile");
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
    assert.equal(children.length, 2, "two worker processes");

    const answered = (await Promise.all([ask(dnsPort, 150), ask(dnsPort, 150)])).reduce((a, b) => a + b);
    assert.equal(answered, 300, "every query answered");
    // Each scrape lands on one worker, which must report both workers' counts summed.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      const text = await res.text();
      assert.equal(res.status, 200);
      assert.equal(sample(text, "coredns_dns_requests_total", /proto="udp".*type="A"/), 300);
      const hits = sample(text, "coredns_cache_hits_total", /type=/, false);
      const misses = sample(text, "coredns_cache_misses_total", /zones="\."/);
      assert.equal(hits + misses, 300, "every lookup is a hit or a miss");
      assert.equal(sample(text, "coredns_build_info", /version=/), 1, "stated once, not summed");
    }
    assert.equal(app.output().match(/Switchyard-DNS-0\.1\.0/g)?.length, 1, "one banner");

    app.child.kill("SIGTERM");
    const exit = await app.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, app.output());
    assert.equal(app.output().match(/SIGTERM: Shutting down/g)?.length, 2, "both workers shut down");
    assert.equal(existsSync(join(app.dir, "dns.pid")), false, "pidfile removed");
    for (const child of children) assert.equal(existsSync(`/proc/${child}`), false, `worker ${child} gone`);
  } finally {
    app.child.kill("SIGKILL");
    upstream.close();
  }
});

test("-workers with a bad Corefile exits 1 with the error", { timeout: 30_000 }, async () => {
  const app = startApp(".:0 {\n    nosuchplugin\n}\n", ["-workers", "2"]);
  try {
    const exit = await app.exited;
    assert.equal(exit.code, 1, app.output());
    assert.match(app.output(), /Unknown directive 'nosuchplugin'/);
  } finally {
    app.child.kill("SIGKILL");
  }
});

/** A cgroup v1 cpu folder with a CFS quota of `cores`, removed by the returned function. */
function cpuCgroup(name: string, cores: number): { dir: string; remove: () => void } {
  const dir = join(CPU_HIERARCHY, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "cpu.cfs_period_us"), "100000");
  writeFileSync(join(dir, "cpu.cfs_quota_us"), String(Math.round(cores * 100_000)));
  return { dir, remove: () => rmdirSync(dir) };
}

const CPU_HIERARCHY = "/sys/fs/cgroup/cpu";
const noCpuCgroup =
  process.getuid?.() !== 0
    ? "needs root to make a cgroup"
    : !existsSync(join(CPU_HIERARCHY, "cpu.cfs_quota_us"))
      ? "needs the cgroup v1 cpu hierarchy at /sys/fs/cgroup/cpu"
      : availableParallelism() < 2
        ? "needs 2 CPUs to tell a limit from none"
        : false;

test("$SWITCHYARD_DNS_WORKERS=auto: one process under a half-core CPU limit, one worker per CPU without", {
  timeout: 60_000,
  skip: noCpuCgroup,
}, async () => {
  const upstream = await nxdomainUpstream();
  const cgroup = cpuCgroup(`sy-dns-auto-${process.pid}`, 0.5);
  const started: App[] = [];
  try {
    for (const [cgroups, workers] of [
      [[cgroup.dir], 0],
      [[], availableParallelism()],
    ] as const) {
      const dnsPort = await freePort();
      const app = startApp(`.:${dnsPort} {\n    forward . 127.0.0.1:${upstream.port}\n}\n`, [], {
        env: { SWITCHYARD_DNS_WORKERS: "auto" },
        cgroups: [...cgroups],
      });
      started.push(app);
      await eventually(`the DNS socket\n${app.output()}`, () => udpBound(dnsPort), { timeoutMs: 20_000 });
      const pid = app.child.pid as number;
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
      assert.equal(children.filter(Boolean).length, workers, `worker processes with cgroups ${cgroups}`);
      assert.equal(await ask(dnsPort, 20), 20, "every query answered");
      app.child.kill("SIGTERM");
      assert.deepEqual(await app.exited, { code: 0, signal: null }, `${workers} workers: ${app.output()}`);
    }
  } finally {
    for (const app of started) app.child.kill("SIGKILL");
    await Promise.all(started.map((a) => a.exited));
    cgroup.remove();
    upstream.close();
  }
});

// kube-proxy's start-up kernel settings, on a fake /proc: what the conntrack section turns
// into (cap, floor, never lowering nf_conntrack_max, a zero leaves the kernel's value) and
// how they are applied (values already right are not written; a refused write is one line).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CONNTRACK_HASHSIZE,
  conntrackMax,
  conntrackSettings,
  DEFAULT_CONNTRACK,
} from "../../src/conntrack/sysctls.js";
import { applyNodeSettings, type SettingFiles, settingPath } from "../../src/sysctl/node-setting.js";
import { localhostNodePortSettings, ROUTE_LOCALNET } from "../../src/sysctl/route-localnet.js";

/** An in-memory /proc and /sys; `readOnly` refuses every write as a read-only mount does. */
function fakeFiles(initial: Record<string, number>, readOnly = false) {
  const files = new Map(Object.entries(initial).map(([k, v]) => [settingPath(k), `${v}\n`]));
  const writes: string[] = [];
  const io: SettingFiles = {
    async read(path) {
      const v = files.get(path);
      if (v === undefined)
        throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: "ENOENT" });
      return v;
    },
    async write(path, text) {
      if (readOnly) {
        throw Object.assign(new Error(`EROFS: read-only file system, open '${path}'`), { code: "EROFS" });
      }
      writes.push(`${path}=${text}`);
      files.set(path, text);
    },
  };
  return { io, writes, value: (key: string) => files.get(settingPath(key))?.trim() };
}

test("conntrackMax: maxPerCore × CPUs, at least min, at most 1Mi; 0 leaves it", () => {
  assert.equal(conntrackMax(DEFAULT_CONNTRACK, 2), 131072, "2 × 32768 is below the floor");
  assert.equal(conntrackMax(DEFAULT_CONNTRACK, 8), 262144);
  assert.equal(conntrackMax(DEFAULT_CONNTRACK, 64), 1048576, "capped");
  assert.equal(conntrackMax({ maxPerCore: 0, min: 131072 }, 8), 0);
});

test("conntrackSettings: kube-proxy's order; zero durations and a false tcpBeLiberal are skipped", () => {
  const keys = (c = DEFAULT_CONNTRACK) => conntrackSettings(c, 4).map((s) => `${s.key}=${s.value}`);
  assert.deepEqual(keys(), [
    "net.netfilter.nf_conntrack_max=131072",
    `${CONNTRACK_HASHSIZE}=32768`,
    "net.netfilter.nf_conntrack_tcp_timeout_established=86400",
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600",
  ]);
  assert.deepEqual(
    keys({
      ...DEFAULT_CONNTRACK,
      maxPerCore: 0,
      tcpEstablishedTimeoutMs: 0,
      tcpBeLiberal: true,
      udpTimeoutMs: 45_500,
      udpStreamTimeoutMs: 180_000,
    }),
    [
      "net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600",
      "net.netfilter.nf_conntrack_tcp_be_liberal=1",
      "net.netfilter.nf_conntrack_udp_timeout=45",
      "net.netfilter.nf_conntrack_udp_timeout_stream=180",
    ],
  );
});

test("nf_conntrack_max and the hash size are only raised; timeouts are set when they differ", async () => {
  const f = fakeFiles({
    "net.netfilter.nf_conntrack_max": 262144,
    [CONNTRACK_HASHSIZE]: 16384,
    "net.netfilter.nf_conntrack_tcp_timeout_established": 432000,
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait": 3600,
  });
  const changes = await applyNodeSettings(f.io, conntrackSettings(DEFAULT_CONNTRACK, 2));
  assert.equal(f.value("net.netfilter.nf_conntrack_max"), "262144", "a larger table is kept");
  assert.equal(f.value(CONNTRACK_HASHSIZE), "32768", "raised to a quarter of the wanted max");
  assert.deepEqual(changes, [
    { key: CONNTRACK_HASHSIZE, before: 16384, after: 32768 },
    { key: "net.netfilter.nf_conntrack_tcp_timeout_established", before: 432000, after: 86400 },
  ]);
  // A second run finds everything right and writes nothing.
  f.writes.length = 0;
  assert.deepEqual(await applyNodeSettings(f.io, conntrackSettings(DEFAULT_CONNTRACK, 2)), []);
  assert.deepEqual(f.writes, []);

  const small = fakeFiles({ "net.netfilter.nf_conntrack_max": 65536, [CONNTRACK_HASHSIZE]: 65536 });
  await applyNodeSettings(small.io, conntrackSettings({ ...DEFAULT_CONNTRACK, maxPerCore: 65536 }, 4));
  assert.equal(small.value("net.netfilter.nf_conntrack_max"), "262144");
  assert.equal(small.value(CONNTRACK_HASHSIZE), "65536", "already a quarter of it");
});

test("a read-only /proc/sys: nothing to change is fine; something to change is one clear error", async () => {
  const ok = fakeFiles({ [ROUTE_LOCALNET]: 1 }, true);
  assert.deepEqual(await applyNodeSettings(ok.io, localhostNodePortSettings(true)), []);
  const ro = fakeFiles({ [ROUTE_LOCALNET]: 0 }, true);
  await assert.rejects(applyNodeSettings(ro.io, localhostNodePortSettings(true)), (err: Error) => {
    assert.equal(
      err.message,
      "can't set net.ipv4.conf.all.route_localnet to 1 (read-only file system): EROFS: read-only file system, open '/proc/sys/net/ipv4/conf/all/route_localnet'",
    );
    return true;
  });
  assert.deepEqual(localhostNodePortSettings(false), []);
});

test("an unreadable value is written, as kube-proxy treats a failed read as 0", async () => {
  const f = fakeFiles({});
  const seen: string[] = [];
  await applyNodeSettings(f.io, localhostNodePortSettings(true), (c) => seen.push(`${c.key} ${c.before}`));
  assert.equal(f.value(ROUTE_LOCALNET), "1");
  assert.deepEqual(seen, ["net.ipv4.conf.all.route_localnet undefined"]);
});

// IPVS mode's sysctls on a fake /proc, through applyStartupSettings as the app runs them:
// upstream's list and order, conn_reuse_mode by kernel version, only differing values
// written, "Changed sysctl" lines, and upstream's error wording for single and dual stack.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KERNEL_OSRELEASE, type SettingFiles, settingPath } from "@switchyard/proxier";
import { defaultConfig, type ProxyConfig, resolve } from "../src/config/config.js";
import { IPVSSettingsError } from "../src/ipvs-settings.js";
import { applyStartupSettings } from "../src/node-settings.js";

const NODE_IPS = { IPv4: "192.168.0.2", IPv6: "fd00::2" };
const IPVS_KEYS = [
  "net.ipv4.vs.conntrack",
  "net.ipv4.vs.conn_reuse_mode",
  "net.ipv4.vs.expire_nodest_conn",
  "net.ipv4.vs.expire_quiescent_template",
  "net.ipv4.ip_forward",
  "net.ipv4.conf.all.arp_ignore",
  "net.ipv4.conf.all.arp_announce",
];

/** A /proc with every IPVS sysctl at its kernel default and the given osrelease. */
function kernel(osrelease: string, refuse?: string) {
  const files = new Map<string, string>([[KERNEL_OSRELEASE, `${osrelease}\n`]]);
  for (const k of IPVS_KEYS) files.set(settingPath(k), k.endsWith("conn_reuse_mode") ? "1" : "0");
  const writes: string[] = [];
  const io: SettingFiles = {
    read: async (p) => {
      const v = files.get(p);
      if (v === undefined) throw new Error(`ENOENT ${p}`);
      return v;
    },
    write: async (p, v) => {
      if (p === settingPath(refuse ?? "")) throw new Error(`EACCES: permission denied, open '${p}'`);
      writes.push(`${p.replace("/proc/sys/", "")}=${v}`);
      files.set(p, v);
    },
  };
  return { io, writes };
}

function recorder() {
  const lines: string[] = [];
  const log = (level: string) => (msg: string, f?: Record<string, unknown>) =>
    lines.push(`${level} ${msg} ${JSON.stringify(f ?? {})}`);
  const logger = { info: log("I"), warn: log("W"), error: log("E"), v: () => logger };
  return { logger, lines };
}

const options = (edit: (c: ProxyConfig) => void = () => {}) => {
  const c = defaultConfig();
  c.mode = "ipvs";
  c.conntrack.maxPerCore = 0;
  c.conntrack.tcpEstablishedTimeoutMs = 0;
  c.conntrack.tcpCloseWaitTimeoutMs = 0;
  edit(c);
  return resolve(c);
};

test("a 6.x kernel: conn_reuse_mode left as-is, the rest set in upstream's order", async () => {
  const k = kernel("6.18.44-fc-v657");
  const { logger, lines } = recorder();
  await applyStartupSettings(options(), ["IPv4"], NODE_IPS, { logger, files: k.io, numCPU: 2 });
  assert.deepEqual(k.writes, [
    "net/ipv4/vs/conntrack=1",
    "net/ipv4/vs/expire_nodest_conn=1",
    "net/ipv4/vs/expire_quiescent_template=1",
    "net/ipv4/ip_forward=1",
  ]);
  assert.deepEqual(lines.slice(0, 2), [
    'I Left as-is {"ipFamily":"IPv4","sysctl":"net/ipv4/vs/conn_reuse_mode"}',
    'I Changed sysctl {"ipFamily":"IPv4","name":"net/ipv4/vs/conntrack","before":0,"after":1}',
  ]);
});

test("strictARP adds arp_ignore and arp_announce; a 5.4 kernel gets conn_reuse_mode=0", async () => {
  const k = kernel("5.4.0-150-generic");
  const o = options((c) => {
    c.ipvs.strictARP = true;
  });
  await applyStartupSettings(o, ["IPv4"], NODE_IPS, { logger: recorder().logger, files: k.io, numCPU: 2 });
  assert.deepEqual(k.writes, [
    "net/ipv4/vs/conntrack=1",
    "net/ipv4/vs/conn_reuse_mode=0",
    "net/ipv4/vs/expire_nodest_conn=1",
    "net/ipv4/vs/expire_quiescent_template=1",
    "net/ipv4/ip_forward=1",
    "net/ipv4/conf/all/arp_ignore=1",
    "net/ipv4/conf/all/arp_announce=2",
  ]);
});

test("a kernel before 4.1 logs upstream's error for conn_reuse_mode and goes on", async () => {
  const k = kernel("3.10.0-1160.el7.x86_64");
  const { logger, lines } = recorder();
  await applyStartupSettings(options(), ["IPv4"], NODE_IPS, { logger, files: k.io, numCPU: 2 });
  assert.ok(!k.writes.some((w) => w.includes("conn_reuse_mode")));
  assert.ok(
    lines.includes(
      'E Can\'t set sysctl, kernel version doesn\'t satisfy minimum version requirements {"ipFamily":"IPv4","sysctl":"net/ipv4/vs/conn_reuse_mode","minimumKernelVersion":"4.1"}',
    ),
  );
});

test("values already right are not written; dual stack runs the steps once per family", async () => {
  const k = kernel("6.1.0");
  const { logger, lines } = recorder();
  await applyStartupSettings(options(), ["IPv4", "IPv6"], NODE_IPS, { logger, files: k.io, numCPU: 2 });
  assert.equal(k.writes.length, 4, "the IPv6 pass finds everything set");
  assert.equal(lines.filter((l) => l.startsWith("I Left as-is")).length, 2);
  assert.equal(lines.filter((l) => l.startsWith("I Changed sysctl")).length, 4);
});

test("a refused write stops start-up with upstream's words", async () => {
  const single = kernel("6.1.0", "net.ipv4.ip_forward");
  await assert.rejects(
    applyStartupSettings(options(), ["IPv6"], NODE_IPS, { logger: recorder().logger, files: single.io }),
    (e: unknown) =>
      e instanceof IPVSSettingsError &&
      e.message ===
        "unable to create proxier: can't set sysctl net/ipv4/ip_forward to 1: EACCES: permission denied, open '/proc/sys/net/ipv4/ip_forward'",
  );
  const dual = kernel("6.1.0", "net.ipv4.vs.conntrack");
  await assert.rejects(
    applyStartupSettings(options(), ["IPv4", "IPv6"], NODE_IPS, {
      logger: recorder().logger,
      files: dual.io,
    }),
    /^IPVSSettingsError: unable to create proxier: unable to create ipv4 proxier: can't set sysctl net\/ipv4\/vs\/conntrack to 1: EACCES/,
  );
});

test("an unreadable osrelease fails as upstream's kernel-version lookup does", async () => {
  const k = kernel("6.1.0");
  const io = {
    ...k.io,
    read: async (p: string) => (p === KERNEL_OSRELEASE ? Promise.reject(new Error("ENOENT")) : k.io.read(p)),
  };
  await assert.rejects(
    applyStartupSettings(options(), ["IPv4"], NODE_IPS, { logger: recorder().logger, files: io }),
    /^IPVSSettingsError: unable to create proxier: failed to get kernel version: failed to read os-release file: ENOENT$/,
  );
  assert.deepEqual(k.writes, []);
});

// The start-up sysctls on a fake /proc: the conntrack section in every mode, route_localnet
// only where the IPv4 iptables proxier serves NodePorts on 127.0.0.1, tcp_be_liberal read
// back for iptables mode, and upstream's one-line errors when the kernel refuses a write.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CONNTRACK_HASHSIZE, type SettingFiles, settingPath } from "@switchyard/proxier";
import { defaultConfig, type ProxyConfig, resolve } from "../src/config/config.js";
import { applyStartupSettings, needsRouteLocalnet } from "../src/node-settings.js";

const silent = { info() {}, warn() {}, error() {} };
const NODE_IPS = { IPv4: "192.168.0.2", IPv6: "::1" };

function kernel(readOnly = false) {
  const files = new Map<string, string>([
    [settingPath("net.netfilter.nf_conntrack_max"), "262144"],
    [CONNTRACK_HASHSIZE, "262144"],
    [settingPath("net.netfilter.nf_conntrack_tcp_timeout_established"), "432000"],
    [settingPath("net.netfilter.nf_conntrack_tcp_timeout_close_wait"), "60"],
    [settingPath("net.netfilter.nf_conntrack_tcp_be_liberal"), "0"],
    [settingPath("net.ipv4.conf.all.route_localnet"), "0"],
  ]);
  const writes: string[] = [];
  const io: SettingFiles = {
    read: async (p) => {
      const v = files.get(p);
      if (v === undefined) throw new Error(`ENOENT ${p}`);
      return v;
    },
    write: async (p, v) => {
      if (readOnly)
        throw Object.assign(new Error(`EROFS: read-only file system, open '${p}'`), { code: "EROFS" });
      writes.push(`${p.replace("/proc/sys/", "")}=${v}`);
      files.set(p, v);
    },
  };
  return { io, writes };
}

const options = (edit: (c: ProxyConfig) => void = () => {}) => {
  const c = defaultConfig();
  edit(c);
  return resolve(c);
};

test("defaults in iptables mode: timeouts, route_localnet; nf_conntrack_max already large enough", async () => {
  const k = kernel();
  const r = await applyStartupSettings(options(), ["IPv4"], NODE_IPS, {
    logger: silent,
    files: k.io,
    numCPU: 2,
  });
  assert.deepEqual(k.writes, [
    "net/netfilter/nf_conntrack_tcp_timeout_established=86400",
    "net/netfilter/nf_conntrack_tcp_timeout_close_wait=3600",
    "net/ipv4/conf/all/route_localnet=1",
  ]);
  assert.equal(r.tcpBeLiberal, false);
});

test("nftables mode never sets route_localnet; tcpBeLiberal is written and read back", async () => {
  const k = kernel();
  const o = options((c) => {
    c.mode = "nftables";
    c.conntrack.tcpBeLiberal = true;
    c.conntrack.maxPerCore = 0;
  });
  const r = await applyStartupSettings(o, ["IPv4"], NODE_IPS, { logger: silent, files: k.io, numCPU: 2 });
  assert.ok(!k.writes.some((w) => w.includes("route_localnet")));
  assert.ok(k.writes.includes("net/netfilter/nf_conntrack_tcp_be_liberal=1"));
  assert.equal(r.tcpBeLiberal, true);
});

test("route_localnet: iptables, IPv4, localhost NodePorts on, and 127.0.0.1 among the NodePort addresses", () => {
  assert.equal(needsRouteLocalnet(options(), ["IPv4"], NODE_IPS), true);
  assert.equal(needsRouteLocalnet(options(), ["IPv6"], NODE_IPS), false);
  const off = options((c) => {
    c.iptables.localhostNodePorts = false;
  });
  assert.equal(needsRouteLocalnet(off, ["IPv4"], NODE_IPS), false);
  const primaryOnly = options((c) => {
    c.nodePortAddresses = ["primary"];
  });
  assert.equal(needsRouteLocalnet(primaryOnly, ["IPv4"], NODE_IPS), false);
  const ipvs = options((c) => {
    c.mode = "ipvs";
  });
  assert.equal(needsRouteLocalnet(ipvs, ["IPv4"], NODE_IPS), false);
});

test("a read-only /proc/sys stops start-up with upstream's words, naming the file", async () => {
  const k = kernel(true);
  await assert.rejects(
    applyStartupSettings(options(), ["IPv4"], NODE_IPS, { logger: silent, files: k.io, numCPU: 2 }),
    /^NodeSettingsError: could not set conntrack parameters from kube-proxy configuration: can't set net\.netfilter\.nf_conntrack_tcp_timeout_established to 86400 \(read-only file system\): EROFS/,
  );
  // With every conntrack field zeroed, only route_localnet is left to fail.
  const zero = options((c) => {
    Object.assign(c.conntrack, { maxPerCore: 0, tcpEstablishedTimeoutMs: 0, tcpCloseWaitTimeoutMs: 0 });
  });
  await assert.rejects(
    applyStartupSettings(zero, ["IPv4"], NODE_IPS, { logger: silent, files: k.io, numCPU: 2 }),
    /^NodeSettingsError: unable to create proxier: can't set net\.ipv4\.conf\.all\.route_localnet to 1/,
  );
});

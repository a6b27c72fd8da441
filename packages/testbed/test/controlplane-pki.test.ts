// The control plane's certificates as kubeadm lays them out, made with the real openssl, and their files' modes.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { ensurePki, type Pki } from "../src/controlplane/pki.js";

const mode = (path: string) => statSync(path).mode & 0o777;
const cert = (path: string) => new X509Certificate(readFileSync(path));
/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();

describe("control-plane PKI: kubeadm's etcd layout, keys 0600", () => {
  const root = mkdtempSync(join(tmpdir(), "sy-pki-"));
  const dir = join(root, "pki");
  let pki: Pki;
  const options = { ips: ["127.0.0.1"], dnsNames: ["localhost"], etcdIps: ["127.0.0.1"] };
  before(async () => {
    pki = await ensurePki(dir, options);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test("etcd's files under pki/etcd/ and the apiserver's etcd client beside the others, as kubeadm names them", () => {
    const files = filesUnder(dir);
    for (const name of [
      "etcd/ca.crt",
      "etcd/ca.key",
      "etcd/server.crt",
      "etcd/server.key",
      "etcd/peer.crt",
      "etcd/peer.key",
      "etcd/healthcheck-client.crt",
      "etcd/healthcheck-client.key",
      "apiserver-etcd-client.crt",
      "apiserver-etcd-client.key",
    ])
      assert.ok(files.includes(name), `${name} missing from ${files.join(" ")}`);
  });

  test("etcd's certificates: its own CA signs them; kubeadm's CNs, usages and SANs", () => {
    const ca = cert(pki.etcd.caCert);
    assert.equal(ca.subject, "CN=etcd-ca");
    assert.ok(ca.ca);
    for (const pair of [
      pki.etcd.server,
      pki.etcd.peer,
      pki.etcd.healthcheckClient,
      pki.etcd.apiserverClient,
    ]) {
      assert.ok(cert(pair.cert).verify(ca.publicKey), `${pair.cert} is signed by etcd's CA`);
      assert.ok(!cert(pair.cert).verify(cert(pki.caCert).publicKey), `${pair.cert} is not the cluster CA's`);
    }
    const server = cert(pki.etcd.server.cert);
    assert.equal(server.subject, "CN=switchyard-lab");
    assert.deepEqual(
      server.keyUsage?.sort(),
      ["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"],
      "server and client auth",
    );
    assert.equal(
      server.subjectAltName,
      "IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost, DNS:switchyard-lab",
    );
    assert.equal(cert(pki.etcd.peer.cert).subjectAltName, server.subjectAltName);
    assert.equal(cert(pki.etcd.healthcheckClient.cert).subject, "CN=kube-etcd-healthcheck-client");
    assert.equal(cert(pki.etcd.apiserverClient.cert).subject, "CN=kube-apiserver-etcd-client");
    assert.deepEqual(cert(pki.etcd.apiserverClient.cert).keyUsage, ["1.3.6.1.5.5.7.3.2"], "client auth only");
  });

  test("the folders are 0700, every key 0600", () => {
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(join(dir, "etcd")), 0o700);
    const keys = filesUnder(dir).filter((f) => f.endsWith(".key"));
    assert.ok(keys.length >= 12, keys.join(" "));
    for (const key of keys) assert.equal(mode(join(dir, key)), 0o600, key);
  });

  test("a folder left loose (0755, keys 0644) is tightened on the next up, and its certificates kept", async () => {
    const before = cert(pki.etcd.server.cert).serialNumber;
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "etcd"), 0o755);
    for (const key of [pki.saKey, pki.etcd.caKey, pki.etcd.apiserverClient.key]) chmodSync(key, 0o644);
    await ensurePki(dir, options);
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(join(dir, "etcd")), 0o700);
    for (const key of [pki.saKey, pki.etcd.caKey, pki.etcd.apiserverClient.key])
      assert.equal(mode(key), 0o600, key);
    assert.equal(cert(pki.etcd.server.cert).serialNumber, before, "reused while its names hold");
  });

  test("etcd's serving certificate is made again when etcd listens elsewhere", async () => {
    const again = await ensurePki(dir, { ...options, etcdIps: ["127.0.0.2"] });
    assert.match(cert(again.etcd.server.cert).subjectAltName ?? "", /IP Address:127\.0\.0\.2/);
    assert.ok(cert(again.etcd.server.cert).verify(cert(again.etcd.caCert).publicKey));
  });
});

// The pure half of the release downloads: URLs per origin and mirror, checksum files, origin notes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  formatOrigin,
  goPlatform,
  parseChecksum,
  parseOrigin,
  releaseAsset,
} from "../src/upstream/releases.js";

const versions = { kubernetes: "v1.37.2", etcd: "v3.6.16", coredns: "v1.14.7" };
const linux = { os: "linux", arch: "amd64" } as const;
const hash = "a".repeat(64);

describe("release assets", () => {
  test("official URLs: dl.k8s.io per binary, etcd's and CoreDNS's GitHub releases", () => {
    assert.deepEqual(releaseAsset("kubectl", versions, linux, {}), {
      name: "kubectl",
      origin: "kubernetes",
      url: "https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl",
      checksumUrl: "https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl.sha256",
      checksumName: "kubectl",
    });
    assert.deepEqual(releaseAsset("etcd", versions, linux, {}), {
      name: "etcd",
      origin: "etcd",
      url: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-linux-amd64.tar.gz",
      checksumUrl: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/SHA256SUMS",
      checksumName: "etcd-v3.6.16-linux-amd64.tar.gz",
      entry: "etcd-v3.6.16-linux-amd64/etcd",
    });
    assert.deepEqual(releaseAsset("coredns", versions, { os: "linux", arch: "arm64" }, {}), {
      name: "coredns",
      origin: "coredns",
      url: "https://github.com/coredns/coredns/releases/download/v1.14.7/coredns_1.14.7_linux_arm64.tgz",
      checksumUrl:
        "https://github.com/coredns/coredns/releases/download/v1.14.7/coredns_1.14.7_linux_arm64.tgz.sha256",
      checksumName: "coredns_1.14.7_linux_arm64.tgz",
      entry: "coredns",
    });
    const e2e = releaseAsset("e2e.test", versions, linux, {});
    assert.equal(e2e?.url, "https://dl.k8s.io/release/v1.37.2/kubernetes-test-linux-amd64.tar.gz");
    assert.equal(e2e?.entry, "kubernetes/test/bin/e2e.test");
    assert.equal(releaseAsset("ginkgo", versions, linux, {})?.url, e2e?.url);
  });

  test("a mirror variable replaces its origin's base only", () => {
    const env = {
      SWITCHYARD_K8S_RELEASES: "http://127.0.0.1:9/k8s/",
      SWITCHYARD_ETCD_RELEASES: "http://m/etcd",
    };
    assert.equal(
      releaseAsset("kube-proxy", versions, linux, env)?.url,
      "http://127.0.0.1:9/k8s/v1.37.2/bin/linux/amd64/kube-proxy",
    );
    assert.equal(releaseAsset("etcd", versions, linux, env)?.checksumUrl, "http://m/etcd/v3.6.16/SHA256SUMS");
    assert.match(
      releaseAsset("coredns", versions, linux, env)?.url ?? "",
      /^https:\/\/github\.com\/coredns\//,
    );
  });

  test("no release for the image-only programs, kind, or etcd's darwin zip", () => {
    for (const name of ["agnhost", "regression-issue-74839", "kind"] as const)
      assert.equal(releaseAsset(name, versions, linux, {}), undefined, name);
    assert.equal(releaseAsset("etcd", versions, { os: "darwin", arch: "arm64" }, {}), undefined);
  });

  test("Go's platform names, none for other systems", () => {
    assert.deepEqual(goPlatform("linux", "x64"), { os: "linux", arch: "amd64" });
    assert.deepEqual(goPlatform("darwin", "arm64"), { os: "darwin", arch: "arm64" });
    assert.equal(goPlatform("win32", "x64"), undefined);
    assert.equal(goPlatform("linux", "ppc64"), undefined);
  });
});

describe("checksum files", () => {
  test("a bare hash, one line with a name, a SHA256SUMS list", () => {
    assert.equal(parseChecksum(`${hash.toUpperCase()}\n`, "kubectl"), hash);
    assert.equal(
      parseChecksum(`${hash}  coredns_1.14.7_linux_amd64.tgz\n`, "coredns_1.14.7_linux_amd64.tgz"),
      hash,
    );
    const sums = [
      `${"b".repeat(64)}  etcd-v3.6.16-darwin-arm64.zip`,
      `${hash} *etcd-v3.6.16-linux-amd64.tar.gz`,
    ];
    assert.equal(parseChecksum(sums.join("\n"), "etcd-v3.6.16-linux-amd64.tar.gz"), hash);
  });

  test("refuses a file without the name, or without a hash", () => {
    assert.throws(() => parseChecksum(`${hash}  other.tgz`, "coredns.tgz"), /no SHA-256 for coredns\.tgz/);
    assert.throws(() => parseChecksum("<html>not found</html>", "kubectl"), /no SHA-256 for kubectl/);
    assert.throws(() => parseChecksum("", "kubectl"), /no SHA-256/);
  });
});

describe("origin notes", () => {
  test("round trip, and nothing from a file that is not one", () => {
    const release = {
      kind: "release",
      url: "https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl",
    } as const;
    assert.deepEqual(parseOrigin(formatOrigin(release)), release);
    assert.deepEqual(parseOrigin(formatOrigin({ kind: "source" })), { kind: "source" });
    assert.equal(parseOrigin("garbage"), undefined);
  });
});

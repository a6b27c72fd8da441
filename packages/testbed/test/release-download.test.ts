// Release downloads against a real HTTP server on 127.0.0.1 serving a fake release tree, and `buildUpstream`'s
// fallback to a (fake) source build. Archives are made at test time with the system tar.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { BinarySpec } from "../src/upstream/binaries.js";
import { resolveBinary } from "../src/upstream/binaries.js";
import { buildUpstream } from "../src/upstream/build.js";
import { downloadReleases, httpNet, type ReleaseNet, tarExtract } from "../src/upstream/download.js";
import { goPlatform, releaseAsset } from "../src/upstream/releases.js";
import { readVersions } from "../src/upstream/versions.js";

const sha = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");
const versions = readVersions();
const platform = goPlatform(process.platform, process.arch) ?? { os: "linux", arch: "amd64" };
const { os, arch } = platform;

/** A tar.gz made by the system tar from files {path: content}. */
function tarball(files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "sy-tar-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  execFileSync("tar", ["-czf", join(dir, "out.tgz"), "-C", dir, ...Object.keys(files)]);
  return readFileSync(join(dir, "out.tgz"));
}

/** The fake release tree: path → body. Anything else is a 404. */
const tree = new Map<string, Buffer | string>();
function serve(path: string, body: Buffer | string) {
  tree.set(path, body);
}

let server: Server;
let base: string;
let closedPort: number;
const requests: string[] = [];

before(async () => {
  const kube = (name: string) => `/k8s/${versions.kubernetes}/bin/${os}/${arch}/${name}`;
  serve(kube("kubectl"), "#!/bin/sh\necho kubectl\n");
  serve(`${kube("kubectl")}.sha256`, sha("#!/bin/sh\necho kubectl\n"));
  // A file whose published checksum is another file's.
  serve(kube("kube-proxy"), "tampered");
  serve(`${kube("kube-proxy")}.sha256`, sha("the real one"));
  // kube-scheduler: no file at all (404).
  const etcdStem = `etcd-${versions.etcd}-${os}-${arch}`;
  const etcd = tarball({ [`${etcdStem}/etcd`]: "#!/bin/sh\necho etcd\n", [`${etcdStem}/etcdctl`]: "x" });
  serve(`/etcd/${versions.etcd}/${etcdStem}.tar.gz`, etcd);
  serve(
    `/etcd/${versions.etcd}/SHA256SUMS`,
    `${"0".repeat(64)}  other.zip\n${sha(etcd)}  ${etcdStem}.tar.gz\n`,
  );
  const corednsFile = `coredns_${versions.coredns.slice(1)}_${os}_${arch}.tgz`;
  const coredns = tarball({ coredns: "#!/bin/sh\necho coredns\n" });
  serve(`/coredns/${versions.coredns}/${corednsFile}`, coredns);
  serve(`/coredns/${versions.coredns}/${corednsFile}.sha256`, `${sha(coredns)}  ${corednsFile}\n`);
  const testTar = tarball({
    "kubernetes/test/bin/e2e.test": "e2e",
    "kubernetes/test/bin/ginkgo": "ginkgo",
  });
  serve(`/k8s/${versions.kubernetes}/kubernetes-test-${os}-${arch}.tar.gz`, testTar);
  serve(`/k8s/${versions.kubernetes}/kubernetes-test-${os}-${arch}.tar.gz.sha256`, sha(testTar));

  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const body = tree.get(req.url ?? "");
    res.writeHead(body === undefined ? 404 : 200).end(body ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port that was free a moment ago and is closed now: connections to it are refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

after(() => server.close());

const mirrors = () => ({
  SWITCHYARD_K8S_RELEASES: `${base}/k8s`,
  SWITCHYARD_ETCD_RELEASES: `${base}/etcd`,
  SWITCHYARD_COREDNS_RELEASES: `${base}/coredns`,
});
const deps = { net: httpNet({ headersMs: 2000, idleMs: 2000 }), extract: tarExtract };

/** `net`, with the URLs asked of it listed: which requests a failure let through. */
function counted(net: ReleaseNet): { net: ReleaseNet; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    net: {
      text: (url) => (asked.push(url), net.text(url)),
      file: (url, path) => (asked.push(url), net.file(url, path)),
    },
  };
}
const assetsFor = (names: Parameters<typeof releaseAsset>[0][], env: Record<string, string>) =>
  names.map((n) => {
    const a = releaseAsset(n, versions, platform, env);
    assert.ok(a, n);
    return a;
  });

describe("release downloads from a local server", () => {
  test("a good file is installed executable, with its origin beside it", async () => {
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const [outcome] = await downloadReleases(assetsFor(["kubectl"], mirrors()), bin, deps);
    const url = `${base}/k8s/${versions.kubernetes}/bin/${os}/${arch}/kubectl`;
    assert.deepEqual(outcome, { name: "kubectl", ok: true, url });
    assert.equal(readFileSync(join(bin, "kubectl"), "utf8"), "#!/bin/sh\necho kubectl\n");
    assert.equal(statSync(join(bin, "kubectl")).mode & 0o777, 0o755);
    assert.equal(readFileSync(join(bin, "kubectl.origin"), "utf8"), `release ${url}\n`);
    assert.deepEqual(resolveBinary("kubectl", { PATH: "" }, bin).origin, { kind: "release", url });
  });

  test("a wrong checksum is refused in one line and nothing is installed", async () => {
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const [outcome] = await downloadReleases(assetsFor(["kube-proxy"], mirrors()), bin, deps);
    assert.equal(outcome?.ok, false);
    const reason = outcome && !outcome.ok ? outcome.reason : "";
    assert.match(
      reason,
      /kube-proxy: SHA-256 [0-9a-f]{64} does not match the published [0-9a-f]{64}; refused$/,
    );
    assert.ok(!reason.includes("\n"));
    assert.ok(!existsSync(join(bin, "kube-proxy")));
    assert.ok(!existsSync(join(bin, "kube-proxy.origin")));
  });

  test("a 404 fails that binary only", async () => {
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const outcomes = await downloadReleases(assetsFor(["kube-scheduler", "kubectl"], mirrors()), bin, deps);
    assert.deepEqual(
      outcomes.map((o) => [o.name, o.ok]),
      [
        ["kube-scheduler", false],
        ["kubectl", true],
      ],
    );
    assert.match(
      outcomes[0] && !outcomes[0].ok ? outcomes[0].reason : "",
      /kube-scheduler\.sha256: HTTP 404$/,
    );
  });

  test("etcd, CoreDNS and the e2e suite come out of their archives", async () => {
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const outcomes = await downloadReleases(
      assetsFor(["etcd", "coredns", "e2e.test", "ginkgo"], mirrors()),
      bin,
      deps,
    );
    assert.deepEqual(
      outcomes.map((o) => [o.name, o.ok]),
      [
        ["etcd", true],
        ["coredns", true],
        ["e2e.test", true],
        ["ginkgo", true],
      ],
    );
    assert.equal(readFileSync(join(bin, "etcd"), "utf8"), "#!/bin/sh\necho etcd\n");
    assert.equal(readFileSync(join(bin, "coredns"), "utf8"), "#!/bin/sh\necho coredns\n");
    assert.equal(readFileSync(join(bin, "ginkgo"), "utf8"), "ginkgo");
    assert.ok(!existsSync(join(bin, "etcdctl")), "only the wanted entry is unpacked into the cache");
    // The shared test tarball was fetched once for both of its binaries.
    const testTar = `/k8s/${versions.kubernetes}/kubernetes-test-${os}-${arch}.tar.gz`;
    assert.equal(requests.filter((r) => r === testTar).length, 1);
  });

  test("a refused connection fails fast, and the origin's other binaries are not tried", async () => {
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const env = { SWITCHYARD_K8S_RELEASES: `http://127.0.0.1:${closedPort}/k8s` };
    const net = counted(deps.net);
    const outcomes = await downloadReleases(assetsFor(["kubectl", "kube-apiserver"], env), bin, {
      ...deps,
      net: net.net,
    });
    // Refused at once (no wait on SYN retries), and only the first request was made.
    assert.equal(net.asked.length, 1, net.asked.join(", "));
    for (const o of outcomes) {
      assert.equal(o.ok, false);
      assert.match(
        o.ok ? "" : o.reason,
        new RegExp(`^127\\.0\\.0\\.1:${closedPort} unreachable: ECONNREFUSED$`),
      );
    }
  });
});

test("a server that accepts but never answers fails after the headers deadline", async () => {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  try {
    const port = (silent.address() as AddressInfo).port;
    const bin = mkdtempSync(join(tmpdir(), "sy-rel-"));
    const net = counted(httpNet({ headersMs: 300 }));
    const outcomes = await downloadReleases(
      assetsFor(["kubectl", "kubelet"], { SWITCHYARD_K8S_RELEASES: `http://127.0.0.1:${port}/k8s` }),
      bin,
      { net: net.net, extract: tarExtract },
    );
    // One deadline for the origin, not one per binary: the second binary is never asked for.
    assert.equal(net.asked.length, 1, net.asked.join(", "));
    for (const o of outcomes) assert.match(o.ok ? "" : o.reason, /unreachable: no answer within 0\.3 s$/);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
});

describe("upstream build: releases first, the source build for the rest", () => {
  function fakeSource(built: string[]) {
    return async (specs: readonly BinarySpec[], binDir: string) => {
      for (const s of specs) {
        built.push(s.name);
        writeFileSync(join(binDir, s.name), "#!/bin/sh\n", { mode: 0o755 });
      }
    };
  }

  test("downloads what answers, builds the rest from source, and says which", async () => {
    const cache = mkdtempSync(join(tmpdir(), "sy-build-"));
    const env = { SWITCHYARD_CACHE_DIR: cache, PATH: "", ...mirrors() };
    const built: string[] = [];
    const lines: string[] = [];
    const result = await buildUpstream({
      env,
      only: ["kubectl", "kube-proxy", "kube-scheduler", "etcd", "agnhost"],
      out: { write: (t) => lines.push(t) },
      download: deps,
      sourceBuild: fakeSource(built),
    });
    assert.deepEqual(result.downloaded, ["kubectl", "etcd"]);
    assert.deepEqual(result.built.sort(), ["agnhost", "kube-proxy", "kube-scheduler"]);
    assert.deepEqual(built.sort(), ["agnhost", "kube-proxy", "kube-scheduler"]);
    const said = lines.join("");
    assert.match(said, /downloaded kubectl, etcd; building kube-scheduler, kube-proxy from source \(/);
    assert.match(said, /does not match the published/);
    assert.equal(resolveBinary("kube-proxy", env, result.binDir).origin?.kind, "source");
    assert.equal(resolveBinary("etcd", env, result.binDir).origin?.kind, "release");
  });

  test("a binary already in the cache is used as is: no download, no build", async () => {
    const cache = mkdtempSync(join(tmpdir(), "sy-build-"));
    const bin = join(cache, versions.kubernetes, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "kubectl"), "#!/bin/sh\necho from an earlier source build\n", { mode: 0o755 });
    const before = requests.length;
    const built: string[] = [];
    const result = await buildUpstream({
      env: { SWITCHYARD_CACHE_DIR: cache, PATH: "", ...mirrors() },
      only: ["kubectl"],
      out: { write: () => {} },
      download: deps,
      sourceBuild: fakeSource(built),
    });
    assert.deepEqual([result.skipped, result.downloaded, result.built], [["kubectl"], [], []]);
    assert.equal(requests.length, before, "no request was made");
    assert.match(readFileSync(join(bin, "kubectl"), "utf8"), /earlier source build/);
  });

  test("SWITCHYARD_RELEASES=off goes straight to the source build", async () => {
    const cache = mkdtempSync(join(tmpdir(), "sy-build-"));
    const before = requests.length;
    const built: string[] = [];
    const result = await buildUpstream({
      env: { SWITCHYARD_CACHE_DIR: cache, PATH: "", SWITCHYARD_RELEASES: "off", ...mirrors() },
      only: ["kubectl"],
      out: { write: () => {} },
      download: deps,
      sourceBuild: fakeSource(built),
    });
    assert.deepEqual([result.downloaded, built], [[], ["kubectl"]]);
    assert.equal(requests.length, before);
  });
});

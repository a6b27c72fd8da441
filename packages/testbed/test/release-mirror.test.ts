// The download path end to end with real binaries: this machine's upstream binaries laid out as their official
// releases publish them (mirror.ts), served on 127.0.0.1, and `buildUpstream` (what `switchyard-lab upstream build`
// runs) filling an empty cache from them with its real network and tar. Skipped, saying why, when the binaries
// have not been built or downloaded into the cache yet.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { BinarySpec, UpstreamBinary } from "../src/upstream/binaries.js";
import { binarySpecs, resolveBinary } from "../src/upstream/binaries.js";
import { buildUpstream } from "../src/upstream/build.js";
import { layOutMirror, type ServedMirror, serveMirror, sha256File } from "../src/upstream/mirror.js";
import { goPlatform, releaseAsset } from "../src/upstream/releases.js";
import { readVersions } from "../src/upstream/versions.js";

const versions = readVersions();
const platform = goPlatform(process.platform, process.arch);
/** What a plain `upstream build` gets that a release ships as a program: all seven on Linux. */
const shipped = binarySpecs
  .map((s) => s.name)
  .filter((name) => platform && releaseAsset(name, versions, platform, {}));
/** The pinned binaries of this machine; one found only on PATH may be any version, so it does not count. */
const sources = new Map(
  shipped
    .map((name) => [name, resolveBinary(name)] as const)
    .filter(([, b]) => b.path && b.source !== "path"),
);
const missing = shipped.filter((name) => !sources.has(name));
const skip = !platform
  ? `no release is published for ${process.platform}/${process.arch}`
  : missing.length > 0
    ? `upstream binaries missing (${missing.join(", ")}): run npx switchyard-lab upstream build`
    : false;

/** What each binary prints about its version, and how to ask it. */
const versionCheck: Record<string, { args: string[]; says: string }> = {
  "kube-apiserver": { args: ["--version"], says: `Kubernetes ${versions.kubernetes}` },
  "kube-controller-manager": { args: ["--version"], says: `Kubernetes ${versions.kubernetes}` },
  "kube-scheduler": { args: ["--version"], says: `Kubernetes ${versions.kubernetes}` },
  "kube-proxy": { args: ["--version"], says: `Kubernetes ${versions.kubernetes}` },
  kubectl: { args: ["version", "--client"], says: `Client Version: ${versions.kubernetes}` },
  etcd: { args: ["--version"], says: `etcd Version: ${versions.etcd.replace(/^v/, "")}` },
  coredns: { args: ["-version"], says: `CoreDNS-${versions.coredns.replace(/^v/, "")}` },
};

describe("upstream build from a local mirror of this machine's binaries", { skip }, () => {
  let root: string;
  let mirror: ServedMirror;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "sy-mirror-"));
    const binaries = Object.fromEntries([...sources].map(([name, b]) => [name, b.path as string]));
    const layout = await layOutMirror(binaries, root);
    assert.deepEqual(layout.names.sort(), [...shipped].sort());
    mirror = await serveMirror(root);
  });
  after(async () => {
    await mirror?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** An empty cache, and a PATH with no Go and no kubectl: nothing but the mirror can fill it. */
  function emptyCache(): Record<string, string> {
    const cache = mkdtempSync(join(tmpdir(), "sy-mirror-cache-"));
    return { HOME: cache, PATH: join(cache, "empty-path"), SWITCHYARD_CACHE_DIR: cache, ...mirror.env };
  }

  test("every release-shipped binary comes from the mirror, byte for byte, executable, saying its version", async () => {
    const env = emptyCache();
    const lines: string[] = [];
    const result = await buildUpstream({ env, out: { write: (t) => lines.push(t) } });
    assert.deepEqual([result.downloaded, result.built], [shipped, []], lines.join(""));
    for (const name of shipped) {
      const got = resolveBinary(name, env, result.binDir);
      const url = releaseAsset(name, versions, platform as NonNullable<typeof platform>, mirror.env)?.url;
      assert.ok(url?.startsWith(`${mirror.url}/`), url);
      assert.deepEqual([got.source, got.origin], ["cache", { kind: "release", url }], name);
      const path = got.path as string;
      const source = sources.get(name)?.path as string;
      assert.notEqual(statSync(path).ino, statSync(source).ino, `${name} was fetched, not linked`);
      assert.equal(await sha256File(path), await sha256File(source), `${name} is byte-identical`);
      assert.equal(statSync(path).mode & 0o777, 0o755, name);
      const check = versionCheck[name];
      assert.ok(check, `a version check for ${name}`);
      const said = execFileSync(path, check.args, { encoding: "utf8", env: {} });
      assert.ok(said.includes(check.says), `${name} ${check.args.join(" ")} said: ${said}`);
    }
    rmSync(env.SWITCHYARD_CACHE_DIR as string, { recursive: true, force: true });
  });

  describe("a wrong checksum on the mirror", () => {
    const kubeProxySum = () =>
      `${root}/k8s/${versions.kubernetes}/bin/${platform?.os}/${platform?.arch}/kube-proxy.sha256`;
    const etcdSums = () => `${root}/etcd/${versions.etcd}/SHA256SUMS`;
    const saved = new Map<string, string>();
    before(() => {
      // A published hash that is not the file's, in both shapes: dl.k8s.io's bare hash, etcd's SHA256SUMS line.
      for (const path of [kubeProxySum(), etcdSums()]) {
        const text = readFileSync(path, "utf8");
        saved.set(path, text);
        writeFileSync(path, text.replace(/^[0-9a-f]{64}/gm, "0".repeat(64)));
      }
    });
    after(() => {
      for (const [path, text] of saved) writeFileSync(path, text);
    });

    test("refuses that binary in one line and builds it from source; the others still download", async () => {
      const env = emptyCache();
      const lines: string[] = [];
      const fromSource: UpstreamBinary[] = [];
      const result = await buildUpstream({
        env,
        only: ["kube-proxy", "kubectl", "etcd"],
        out: { write: (t) => lines.push(t) },
        sourceBuild: async (specs: readonly BinarySpec[], binDir: string) => {
          for (const s of specs) {
            fromSource.push(s.name);
            writeFileSync(join(binDir, s.name), "#!/bin/sh\necho built here\n", { mode: 0o755 });
          }
        },
      });
      assert.deepEqual(
        [result.downloaded, result.built, fromSource],
        [["kubectl"], ["kube-proxy", "etcd"], ["kube-proxy", "etcd"]],
      );
      const said = lines.join("");
      assert.match(said, /downloaded kubectl; building kube-proxy, etcd from source \(/);
      const zeros = "0".repeat(64);
      assert.match(
        said,
        new RegExp(`/kube-proxy: SHA-256 [0-9a-f]{64} does not match the published ${zeros}; refused`),
      );
      assert.match(
        said,
        new RegExp(`\\.tar\\.gz: SHA-256 [0-9a-f]{64} does not match the published ${zeros}; refused`),
      );
      for (const name of ["kube-proxy", "etcd"] as const) {
        assert.deepEqual(resolveBinary(name, env, result.binDir).origin, { kind: "source" }, name);
        assert.match(
          readFileSync(join(result.binDir, name), "utf8"),
          /built here/,
          `${name} is the source build's`,
        );
      }
      rmSync(env.SWITCHYARD_CACHE_DIR as string, { recursive: true, force: true });
    });

    test("without Go the build fails naming that binary, and nothing of it reaches the cache", async () => {
      const env = emptyCache();
      await assert.rejects(
        buildUpstream({ env, only: ["kube-proxy"], out: { write: () => {} } }),
        /^Error: missing upstream binaries: kube-proxy \(no Go toolchain on PATH to build them\)\./,
      );
      const binDir = join(env.SWITCHYARD_CACHE_DIR as string, versions.kubernetes, "bin");
      assert.ok(!existsSync(join(binDir, "kube-proxy")));
      assert.ok(!existsSync(join(binDir, "kube-proxy.origin")));
      rmSync(env.SWITCHYARD_CACHE_DIR as string, { recursive: true, force: true });
    });
  });
});

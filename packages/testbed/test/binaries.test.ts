import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cacheBinDir, envVarFor, missingBinariesMessage, resolveBinary } from "../src/upstream/binaries.js";
import { kubernetesLdflags } from "../src/upstream/build.js";
import { majorMinor, readVersions } from "../src/upstream/versions.js";

function fakeBinary(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, "#!/bin/sh\necho fake\n");
  chmodSync(path, 0o755);
  return path;
}

describe("upstream binaries", () => {
  const versions = readVersions();

  test("versions.json pins one release of each, and the Go modules agree with it", async () => {
    const { readFileSync } = await import("node:fs");
    const { upstreamDir } = await import("../src/upstream/versions.js");
    const gomod = (m: string) => readFileSync(join(upstreamDir, m, "go.mod"), "utf8");
    const required = (m: string, path: string, v: string) =>
      assert.match(
        gomod(m).replace(/^replace[\s\S]*$/m, ""),
        new RegExp(`^(require )?\\s*${path.replaceAll(".", "\\.")} ${v}\\b`, "m"),
      );
    required("kubernetes", "k8s.io/kubernetes", versions.kubernetes);
    const staging = versions.kubernetes.replace(/^v1\./, "v0.");
    for (const line of gomod("kubernetes")
      .split("\n")
      .filter((l) => l.includes("=>"))) {
      assert.ok(line.trim().endsWith(staging), `replace line not at ${staging}: ${line.trim()}`);
    }
    required("etcd", "go.etcd.io/etcd/server/v3", versions.etcd);
    required("coredns", "github.com/coredns/coredns", versions.coredns);
    assert.match(versions.etcd, /^v3\.6\./);
    assert.match(versions.coredns, /^v1\.14\./);
  });

  test("cache folder is outside git, per Kubernetes version, and overridable", () => {
    assert.equal(
      cacheBinDir({ HOME: "/home/u" }, versions),
      `/home/u/.cache/switchyard/${versions.kubernetes}/bin`,
    );
    assert.equal(
      cacheBinDir({ HOME: "/h", XDG_CACHE_HOME: "/x" }, versions),
      `/x/switchyard/${versions.kubernetes}/bin`,
    );
    assert.equal(cacheBinDir({ SWITCHYARD_CACHE_DIR: "/c" }, versions), `/c/${versions.kubernetes}/bin`);
  });

  test("resolution order: per-binary variable, SWITCHYARD_UPSTREAM_BIN, cache, PATH", () => {
    const base = mkdtempSync(join(tmpdir(), "sy-bin-"));
    const onPath = fakeBinary(join(base, "path"), "etcd");
    const cached = fakeBinary(join(base, "cache"), "etcd");
    const inBinDir = fakeBinary(join(base, "release"), "etcd");
    const explicit = fakeBinary(join(base, "explicit"), "my-etcd");
    const env = { PATH: join(base, "path") };
    assert.deepEqual(resolveBinary("etcd", env, join(base, "none")), {
      name: "etcd",
      path: onPath,
      source: "path",
    });
    assert.equal(resolveBinary("etcd", env, join(base, "cache")).path, cached);
    assert.equal(
      resolveBinary("etcd", { ...env, SWITCHYARD_UPSTREAM_BIN: join(base, "release") }, join(base, "cache"))
        .path,
      inBinDir,
    );
    assert.equal(
      resolveBinary("etcd", { ...env, SWITCHYARD_ETCD: explicit }, join(base, "cache")).path,
      explicit,
    );
    assert.equal(resolveBinary("kube-apiserver", env, join(base, "cache")).source, "missing");
    // A variable that points at nothing is reported missing rather than silently falling back.
    assert.equal(
      resolveBinary("etcd", { ...env, SWITCHYARD_ETCD: join(base, "nope") }, join(base, "cache")).source,
      "missing",
    );
  });

  test("the missing-binaries message names them and gives the three ways", () => {
    const text = missingBinariesMessage(["kube-apiserver", "etcd"], "/cache/bin", "no Go toolchain");
    assert.match(text, /^missing upstream binaries: kube-apiserver, etcd \(no Go toolchain\)\./);
    assert.match(text, /upstream build/);
    assert.match(text, /SWITCHYARD_UPSTREAM_BIN=/);
    assert.match(text, /SWITCHYARD_KUBE_APISERVER=<path> SWITCHYARD_ETCD=<path>/);
    assert.equal(envVarFor("kube-controller-manager"), "SWITCHYARD_KUBE_CONTROLLER_MANAGER");
  });

  test("ldflags stamp the real version into both version packages", () => {
    const flags = kubernetesLdflags("v1.37.2", "2026-01-01T00:00:00Z");
    for (const pkg of ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"]) {
      assert.ok(flags.includes(`-X ${pkg}.gitVersion=v1.37.2`));
      assert.ok(flags.includes(`-X ${pkg}.gitMinor=37`));
    }
    assert.deepEqual(majorMinor("v1.37.2"), { major: "1", minor: "37" });
    assert.throws(() => majorMinor("1.37"), /not a semantic version/);
  });
});

describe("upstream build without Go", () => {
  test("names the missing binaries and the three ways to get them, and builds nothing", async () => {
    const { buildUpstream } = await import("../src/upstream/build.js");
    const cache = mkdtempSync(join(tmpdir(), "sy-nogo-"));
    // Downloads off: this test is about the source build's missing Go, and must not reach the internet.
    const env = {
      HOME: cache,
      PATH: join(cache, "empty-path"),
      SWITCHYARD_CACHE_DIR: cache,
      SWITCHYARD_RELEASES: "off",
    };
    await assert.rejects(buildUpstream({ env, out: { write: () => {} } }), (err: Error) => {
      assert.match(
        err.message,
        /^missing upstream binaries: kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubectl, etcd, coredns \(no Go toolchain on PATH to build them\)\./,
      );
      assert.match(
        err.message,
        /1\. npx switchyard-lab upstream build: the official releases where they answer, else built with Go/,
      );
      assert.match(err.message, /2\. download the official releases/);
      assert.match(err.message, /3\. point at each one/);
      return true;
    });
  });
});

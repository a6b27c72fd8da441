#!/usr/bin/env node
// Rewrites the wrapper modules (kubernetes/, etcd/, coredns/, kind/) from versions.json, then `go mod tidy`s
// them. Run it after changing versions.json: node packages/testbed/upstream/gen-gomod.mjs
//
// Why a generator: k8s.io/kubernetes requires its staging modules at v0.0.0 and points them at local folders
// with replace lines, which Go ignores in a dependency. Our main module has to replace each staging module with
// its published v0.X.Y tag; the list of staging modules changes between releases, so it is read from that
// release's own go.mod.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname;
const versions = JSON.parse(readFileSync(join(here, "versions.json"), "utf8"));
const env = { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" };
const header = "// Generated from ../versions.json by ../gen-gomod.mjs; edit versions.json, not this file.";

function go(args, cwd) {
  return execFileSync("go", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

function stagingModules(k8sVersion) {
  const info = JSON.parse(go(["mod", "download", "-json", `k8s.io/kubernetes@${k8sVersion}`], here));
  const gomod = readFileSync(info.GoMod, "utf8");
  return [...gomod.matchAll(/^\s*(k8s\.io\/[\w.-]+) => \.\/staging\//gm)].map((m) => m[1]).sort();
}

/**
 * The packages the e2e suite's test binary links (its e2e_test.go imports them), as blank imports behind a build tag:
 * `go mod tidy` looks at every tag, so the wrapper's go.sum gets what `go test -c k8s.io/kubernetes/test/e2e` needs,
 * while no build of ours ever compiles the file.
 */
function e2eImports(k8sVersion) {
  const info = JSON.parse(go(["mod", "download", "-json", `k8s.io/kubernetes@${k8sVersion}`], here));
  const source = readFileSync(join(info.Dir, "test", "e2e", "e2e_test.go"), "utf8");
  const block = /^import \(([\s\S]*?)^\)/m.exec(source)?.[1] ?? "";
  const paths = [...block.matchAll(/"([\w./-]+\.[\w./-]+)"/g)].map((m) => m[1]);
  return [...new Set(["k8s.io/kubernetes/test/e2e", ...paths])].sort();
}

function write(dir, body) {
  writeFileSync(join(here, dir, "go.mod"), `${header}\n${body}`);
  console.error(`[gen-gomod] ${dir}: go mod tidy`);
  go(["mod", "tidy"], join(here, dir));
}

const k8s = versions.kubernetes;
const staging = k8s.replace(/^v1\./, "v0.");
// kubelet and kubeadm: for the kind node image (scripts/kind-node-image.mjs).
const commands = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kube-proxy",
  "kubectl",
  "kubelet",
  "kubeadm",
];
// The conformance run (switchyard-lab conformance): the e2e suite's test binary and its test-pod program.
writeFileSync(
  join(here, "kubernetes", "e2e_tools.go"),
  [
    header,
    "",
    "//go:build tools",
    "",
    "package tools",
    "",
    "import (",
    ...e2eImports(k8s).map((p) => `\t_ "${p}"`),
    ")",
    "",
  ].join("\n"),
);
write(
  "kubernetes",
  [
    "module switchyard.dev/testbed/upstream/kubernetes",
    "",
    "go 1.26.0",
    "",
    `require k8s.io/kubernetes ${k8s}`,
    "",
    "tool (",
    ...commands.map((c) => `\tk8s.io/kubernetes/cmd/${c}`),
    "\tk8s.io/kubernetes/test/images/agnhost",
    "\tgithub.com/onsi/ginkgo/v2/ginkgo",
    ")",
    "",
    "replace (",
    ...stagingModules(k8s).map((m) => `\t${m} => ${m} ${staging}`),
    ")",
    "",
  ].join("\n"),
);
write(
  "etcd",
  [
    "module switchyard.dev/testbed/upstream/etcd",
    "",
    "go 1.26.0",
    "",
    `require go.etcd.io/etcd/server/v3 ${versions.etcd}`,
    "",
    "tool go.etcd.io/etcd/server/v3",
    "",
  ].join("\n"),
);
write(
  "coredns",
  [
    "module switchyard.dev/testbed/upstream/coredns",
    "",
    "go 1.26.0",
    "",
    `require github.com/coredns/coredns ${versions.coredns}`,
    "",
    "tool github.com/coredns/coredns",
    "",
  ].join("\n"),
);
// kind is built on demand only (the kind runtime of `switchyard-lab up`), never by a plain `upstream build`.
write(
  "kind",
  [
    "module switchyard.dev/testbed/upstream/kind",
    "",
    "go 1.26.0",
    "",
    `require sigs.k8s.io/kind ${versions.kind}`,
    "",
    "tool sigs.k8s.io/kind",
    "",
  ].join("\n"),
);

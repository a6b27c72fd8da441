#!/usr/bin/env node
// Builds a kind node image on this machine, with no container registry:
//   switchyard-local/kind-node:<kubernetes>-r<recipe>
// from packages/testbed/upstream/images/kind-node/: Debian bookworm + systemd, containerd and crictl (built
// from their Go modules into ~/.cache/switchyard/kind-node/), Debian's runc and CNI plugins,
// kubelet/kubeadm/kubectl from packages/testbed/upstream's cache, and, imported into containerd's k8s.io
// namespace (content only, unpacked on first use), the images `kubeadm config images list` names, made from
// the cached binaries:
//   kube-apiserver, kube-controller-manager, kube-scheduler, etcd   component.Dockerfile on the static base
//   pause                                                            pause.Dockerfile (pause.c, compiled here)
//   kube-proxy, coredns                                              scripts/images.mjs --upstream's images
// Cached by tag: a second run finds the image and does nothing. Prints each phase with its time.
//   node scripts/kind-node-image.mjs [--force]
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureEngine } from "./docker-engine.mjs";
import { ensureLocalBaseImages, ensureUpstreamBaseImages, imageExists } from "./local-base-images.mjs";
import { loadTestbedUpstream } from "./testbed-upstream.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const recipeDir = join(root, "packages", "testbed", "upstream", "images", "kind-node");
// Bumped when what goes into the image changes, so an image made by an older recipe is not reused.
const recipe = "3";
// Built from their Go modules (the Go proxy serves them); kubelet >= 1.36 needs containerd 2.x, Debian
// bookworm's containerd is 1.6.
const containerdVersion = "v2.3.7";
const crictlVersion = "v1.37.0";
// What kubeadm v1.37.2 asks for (cmd/kubeadm/app/constants) besides the Kubernetes components themselves.
const pauseVersion = "3.10.2";
const kubeadmEtcdTag = "3.7.0-0";
const kubeadmCorednsTag = "v1.14.6";

const started = Date.now();
let phaseStart = Date.now();
function say(line) {
  console.error(`[kind-node] ${line}`);
}
function phase(name) {
  const now = Date.now();
  say(
    `${name} (+${((now - phaseStart) / 1000).toFixed(1)}s since the last phase, ${((now - started) / 1000).toFixed(1)}s in all)`,
  );
  phaseStart = now;
}
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 28, ...opts });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.slice(0, 4).join(" ")} failed (exit ${r.status ?? r.signal}):\n${(r.stderr || r.stdout || "").trim().split("\n").slice(-25).join("\n")}`,
    );
  return r.stdout ?? "";
}
function dockerBuild(dockerfile, context, tag, buildArgs = {}) {
  const args = ["build", "--network", "host", "-q", "-f", dockerfile, "-t", tag];
  for (const [k, v] of Object.entries(buildArgs)) args.push("--build-arg", `${k}=${v}`);
  run("docker", [...args, context]);
  say(`  built ${tag}`);
}

async function testbed() {
  const upstream = await loadTestbedUpstream();
  return { binaries: upstream, versions: upstream.readVersions(), build: async () => upstream };
}

// kubelet, kubeadm and the rest from packages/testbed/upstream's cache; the missing ones are built first.
async function upstreamBinaries(l) {
  const names = [
    "kubelet",
    "kubeadm",
    "kubectl",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "etcd",
  ];
  const missing = names.filter((n) => !l.binaries.resolveBinary(n).path);
  if (missing.length > 0) {
    say(`building missing upstream binaries: ${missing.join(", ")}`);
    const { buildUpstream } = await l.build();
    await buildUpstream({ only: missing });
  }
  return Object.fromEntries(names.map((n) => [n, l.binaries.resolveBinary(n).path]));
}

// containerd, ctr, the runc shim and crictl: `go install module/cmd@version` into a cache folder per version.
function runtimeBinaries() {
  const base = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), ".cache");
  const bin = join(
    base,
    "switchyard",
    "kind-node",
    `containerd-${containerdVersion}-crictl-${crictlVersion}`,
  );
  const names = ["containerd", "ctr", "containerd-shim-runc-v2", "crictl"];
  if (names.every((n) => existsSync(join(bin, n)))) {
    say(`  reusing containerd ${containerdVersion} and crictl ${crictlVersion} from ${bin}`);
    return { bin, names };
  }
  mkdirSync(bin, { recursive: true });
  const env = { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: "-mod=mod", GOBIN: bin };
  const ctrd = "github.com/containerd/containerd/v2";
  say(`  go install containerd ${containerdVersion} (a few minutes on two cores)`);
  run(
    "go",
    [
      "install",
      "-trimpath",
      "-tags",
      "no_btrfs no_devmapper no_zfs no_aufs",
      "-ldflags",
      `-s -w -X ${ctrd}/version.Version=${containerdVersion}`,
      ...["containerd", "ctr", "containerd-shim-runc-v2"].map((c) => `${ctrd}/cmd/${c}@${containerdVersion}`),
    ],
    { cwd: tmpdir(), env },
  );
  say(`  go install crictl ${crictlVersion}`);
  run(
    "go",
    [
      "install",
      "-trimpath",
      "-ldflags",
      `-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=${crictlVersion}`,
      `sigs.k8s.io/cri-tools/cmd/crictl@${crictlVersion}`,
    ],
    { cwd: tmpdir(), env },
  );
  return { bin, names };
}

// pause.c of the pinned Kubernetes release (in the Go module cache), compiled statically.
function buildPause(k8s, out) {
  const gomodcache = run("go", ["env", "GOMODCACHE"]).trim();
  let src = join(gomodcache, `k8s.io/kubernetes@${k8s}`, "build/pause/linux/pause.c");
  if (!existsSync(src)) {
    run("go", ["mod", "download", `k8s.io/kubernetes@${k8s}`], {
      cwd: join(root, "packages", "testbed", "upstream", "kubernetes"),
      env: { ...process.env, GOTOOLCHAIN: "local" },
    });
    src = join(gomodcache, `k8s.io/kubernetes@${k8s}`, "build/pause/linux/pause.c");
  }
  run("gcc", ["-Os", "-static", `-DVERSION=v${pauseVersion}`, "-o", out, src]);
  run("strip", [out]);
}

async function main() {
  const force = process.argv.includes("--force");
  const host = await ensureEngine();
  if (host) process.env.DOCKER_HOST = host;
  const l = await testbed();
  const k8s = l.versions.kubernetes;
  const tag = `switchyard-local/kind-node:${k8s}-r${recipe}`;
  if (!force && imageExists(tag)) {
    say(`reusing ${tag} (${size(tag)}); --force makes it again`);
    console.log(tag);
    return;
  }
  phase("phase 1/6: upstream binaries (packages/testbed/upstream's cache)");
  const bins = await upstreamBinaries(l);
  phase("phase 2/6: containerd and crictl");
  const rt = runtimeBinaries();
  phase("phase 3/6: base images");
  const bases = { ...ensureLocalBaseImages(), ...ensureUpstreamBaseImages() };
  const upstreamTags = {
    coredns: `switchyard-upstream/coredns:${l.versions.coredns}`,
    proxy: `switchyard-upstream/kube-proxy:${k8s}`,
  };
  if (!imageExists(upstreamTags.coredns) || !imageExists(upstreamTags.proxy)) {
    const { buildImages } = await import("./images.mjs");
    await buildImages([], { upstream: true });
  }
  const work = mkdtempSync(join(tmpdir(), "switchyard-kind-node-"));
  const container = `switchyard-kind-node-import-${process.pid}`;
  try {
    phase("phase 4/6: control-plane images");
    // name in the node -> [image built here, tags kubeadm wants besides the honest one]
    const images = [];
    const component = (binary, honest, aliases = []) => {
      const ctx = join(work, `img-${binary}`);
      mkdirSync(join(ctx, "bin"), { recursive: true });
      copyFileSync(bins[binary], join(ctx, "bin", binary));
      dockerBuild(join(recipeDir, "component.Dockerfile"), ctx, honest, { STATIC_IMAGE: bases.static });
      images.push({ local: honest, names: [honest, ...aliases] });
    };
    component("kube-apiserver", `registry.k8s.io/kube-apiserver:${k8s}`);
    component("kube-controller-manager", `registry.k8s.io/kube-controller-manager:${k8s}`);
    component("kube-scheduler", `registry.k8s.io/kube-scheduler:${k8s}`);
    // kubeadm v1.37 asks for etcd 3.7.0-0 and CoreDNS v1.14.6; the pinned ones (versions.json) are what is
    // inside. Both names point at the same image.
    component("etcd", `registry.k8s.io/etcd:${l.versions.etcd.replace(/^v/, "")}-0`, [
      `registry.k8s.io/etcd:${kubeadmEtcdTag}`,
    ]);
    const pauseCtx = join(work, "img-pause");
    mkdirSync(pauseCtx, { recursive: true });
    buildPause(k8s, join(pauseCtx, "pause"));
    dockerBuild(join(recipeDir, "pause.Dockerfile"), pauseCtx, `registry.k8s.io/pause:${pauseVersion}`, {
      STATIC_IMAGE: bases.static,
    });
    images.push({
      local: `registry.k8s.io/pause:${pauseVersion}`,
      names: [`registry.k8s.io/pause:${pauseVersion}`],
    });
    images.push({ local: upstreamTags.proxy, names: [`registry.k8s.io/kube-proxy:${k8s}`] });
    images.push({
      local: upstreamTags.coredns,
      names: [
        `registry.k8s.io/coredns/coredns:${l.versions.coredns}`,
        `registry.k8s.io/coredns/coredns:${kubeadmCorednsTag}`,
      ],
    });

    phase("phase 5/6: node operating system (Dockerfile)");
    const ctx = join(work, "node");
    mkdirSync(join(ctx, "bin"), { recursive: true });
    cpSync(join(recipeDir, "files"), join(ctx, "files"), { recursive: true });
    cpSync(join(recipeDir, "Dockerfile"), join(ctx, "Dockerfile"));
    for (const n of ["kubelet", "kubeadm", "kubectl"]) copyFileSync(bins[n], join(ctx, "bin", n));
    for (const n of rt.names) copyFileSync(join(rt.bin, n), join(ctx, "bin", n));
    writeFileSync(join(ctx, "version"), `${k8s}\n`);
    const osTag = `switchyard-local/kind-node-os:${k8s}-r${recipe}`;
    dockerBuild(join(ctx, "Dockerfile"), ctx, osTag, { DEBIAN_IMAGE: bases.node });

    phase("phase 6/6: images into containerd (k8s.io namespace, content only), commit");
    run("docker", [
      "run",
      "-d",
      "--privileged",
      "--name",
      container,
      "--entrypoint",
      "sleep",
      osTag,
      "infinity",
    ]);
    run("docker", ["exec", "-d", container, "sh", "-c", "containerd >/var/log/containerd-import.log 2>&1"]);
    for (let i = 0; ; i++) {
      if (spawnSync("docker", ["exec", container, "ctr", "version"], { stdio: "ignore" }).status === 0) break;
      if (i > 60) throw new Error("containerd did not start in the import container");
      execFileSync("sleep", ["0.5"]);
    }
    for (const img of images) {
      const archive = join(work, "image.tar");
      run("docker", ["save", "-o", archive, img.local]);
      run("sh", [
        "-c",
        `docker exec -i ${container} ctr -n k8s.io images import --no-unpack --all-platforms --digests - <'${archive}'`,
      ]);
      rmSync(archive);
      // docker save names the image by its docker tag; give it every name kubeadm and kubelet look for.
      for (const name of img.names)
        if (name !== img.local || !name.startsWith("registry.k8s.io/"))
          run("docker", [
            "exec",
            container,
            "ctr",
            "-n",
            "k8s.io",
            "images",
            "tag",
            "--force",
            qualified(img.local),
            name,
          ]);
      say(`  imported ${img.names.join(", ")}`);
    }
    say(
      `  containerd's k8s.io images:\n${run("docker", ["exec", container, "ctr", "-n", "k8s.io", "images", "ls", "-q"]).trim().replace(/^/gm, "    ")}`,
    );
    run("docker", [
      "exec",
      container,
      "sh",
      "-c",
      "pkill -x containerd; while pgrep -x containerd >/dev/null; do sleep 0.2; done; rm -rf /var/log/containerd-import.log /run/containerd /tmp/*",
    ]);
    run("docker", ["stop", "-t", "1", container]);
    run("docker", [
      "commit",
      "-c",
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/lib/systemd/systemd"]',
      "-c",
      "CMD []",
      // The stop signal (SIGRTMIN+3) comes with the image config; docker 20.10 commit cannot set it.
      "-c",
      "ENV container=docker",
      container,
      tag,
    ]);
  } finally {
    spawnSync("docker", ["rm", "-f", container], { stdio: "ignore" });
    rmSync(work, { recursive: true, force: true });
  }
  phase(`made ${tag}`);
  say(`${tag}: ${size(tag)}, made in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  console.log(tag);
}

// docker save's archive names an image "docker.io/library/x" when it has no registry; ctr keeps it as given.
function qualified(ref) {
  const first = ref.split("/")[0];
  if (ref.includes("/") && (first.includes(".") || first.includes(":"))) return ref;
  return ref.includes("/") ? `docker.io/${ref}` : `docker.io/library/${ref}`;
}

function size(tag) {
  const bytes = Number(run("docker", ["image", "inspect", "--format", "{{.Size}}", tag]).trim());
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

try {
  await main();
} catch (err) {
  say(err.message);
  process.exit(1);
}

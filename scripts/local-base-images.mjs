// Base images made on this machine, for when no container registry answers. The Dockerfiles take their base
// images as build arguments with upstream defaults (node:24-bookworm-slim, gcr.io/distroless/nodejs24-debian12);
// this makes two local equivalents from Debian packages and the project's Node, and scripts/images.mjs passes
// their names as those arguments:
//   switchyard-local/node:<node>-bookworm-slim          debootstrap --variant=minbase bookworm, plus node and
//                                                        npm in /usr/local (where the node image has them)
//   switchyard-local/nodejs-debian12:<node>-nonroot     distroless-like: only the files of the packages a node
//                                                        binary needs (libc6, libgcc-s1, libstdc++6, libssl3,
//                                                        ca-certificates, tzdata, netbase, base-files), node in
//                                                        /nodejs/bin, uid 65532, no shell, no package manager
// They are cached by tag: a second run finds them and makes nothing.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureProjectNode, wantedNodeVersion } from "./project-node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const suite = "bookworm";
// Bumped when what goes into the images changes, so a cached image made by an older recipe is not reused.
const recipe = "2";
const distrolessPackages = [
  "base-files",
  "netbase",
  "tzdata",
  "ca-certificates",
  "libc6",
  "libgcc-s1",
  "libstdc++6",
  "libssl3",
];

export function localBaseTags(node = wantedNodeVersion()) {
  return {
    node: `switchyard-local/node:${node}-${suite}-slim-r${recipe}`,
    distroless: `switchyard-local/nodejs-debian12:${node}-nonroot-r${recipe}`,
  };
}

function say(line) {
  console.error(`[base] ${line}`);
}

// Thrown, not exited, so that the work directory is removed on the way out.
function fail(line) {
  throw new Error(line);
}

function sh(script, what) {
  const r = spawnSync("sh", ["-c", script], { stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) fail(`${what} failed (exit ${r.status ?? r.signal})`);
}

export function imageExists(tag) {
  return spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0;
}

// The Debian mirror this machine's apt uses (deb822 URIs: or one-line `deb` entries), so debootstrap fetches
// from the same place apt-get does; the security archive likewise.
export function aptMirrors() {
  const files = ["/etc/apt/sources.list"];
  if (existsSync("/etc/apt/sources.list.d"))
    for (const f of readdirSync("/etc/apt/sources.list.d")) files.push(join("/etc/apt/sources.list.d", f));
  const uris = [];
  for (const file of files.filter(existsSync)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*URIs:\s*(\S+)/gm)) uris.push(m[1]);
    for (const m of text.matchAll(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)/gm)) uris.push(m[1]);
  }
  const strip = (u) => u.replace(/\/+$/, "");
  return {
    main: strip(uris.find((u) => /\/debian\/?$/.test(u)) ?? "http://deb.debian.org/debian"),
    security: strip(
      uris.find((u) => /\/debian-security\/?$/.test(u)) ?? "http://deb.debian.org/debian-security",
    ),
  };
}

function debootstrap(rootfs, mirrors, extraPackages = []) {
  if (!spawnSync("sh", ["-c", "command -v debootstrap"]).stdout.length) {
    say("installing debootstrap (apt-get install debootstrap)");
    sh(
      "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >/tmp/switchyard-apt.log 2>&1 || { apt-get update >>/tmp/switchyard-apt.log 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >>/tmp/switchyard-apt.log 2>&1; } || { tail -20 /tmp/switchyard-apt.log; exit 1; }",
      "apt-get install debootstrap",
    );
  }
  const started = Date.now();
  say(`debootstrap --variant=minbase ${suite} from ${mirrors.main} (a few minutes; log: ${rootfs}.log)`);
  sh(
    `debootstrap --variant=minbase --include=${["ca-certificates", "tzdata", "netbase", "libssl3", ...extraPackages].join(",")} ${suite} '${rootfs}' '${mirrors.main}' >'${rootfs}.log' 2>&1 || { tail -20 '${rootfs}.log'; exit 1; }`,
    "debootstrap",
  );
  // Where the upstream Debian images point apt: the release, its updates and the security archive.
  writeFileSync(
    join(rootfs, "etc/apt/sources.list"),
    `deb ${mirrors.main} ${suite} main\ndeb ${mirrors.main} ${suite}-updates main\ndeb ${mirrors.security} ${suite}-security main\n`,
  );
  slimDown(rootfs);
  rmSync(join(rootfs, "var/cache/apt/archives"), { recursive: true, force: true });
  rmSync(join(rootfs, "var/lib/apt/lists"), { recursive: true, force: true });
  mkdirSync(join(rootfs, "var/cache/apt/archives/partial"), { recursive: true });
  mkdirSync(join(rootfs, "var/lib/apt/lists/partial"), { recursive: true });
  say(`debootstrap done in ${((Date.now() - started) / 1000).toFixed(0)}s`);
}

// What makes Debian's -slim images slim, in our own files: dpkg leaves out documentation, manual pages and
// translations (copyright files stay), and apt keeps no package caches (pkgcache.bin and srcpkgcache.bin
// alone are ~80 MB after an apt-get update) and no downloaded .debs. Then the same is removed from what
// debootstrap already installed.
function slimDown(rootfs) {
  writeFileSync(
    join(rootfs, "etc/dpkg/dpkg.cfg.d/switchyard-slim"),
    [
      "path-exclude /usr/share/doc/*",
      "path-include /usr/share/doc/*/copyright",
      "path-exclude /usr/share/man/*",
      "path-exclude /usr/share/info/*",
      "path-exclude /usr/share/groff/*",
      "path-exclude /usr/share/lintian/*",
      "path-exclude /usr/share/locale/*",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(rootfs, "etc/apt/apt.conf.d/switchyard-slim"),
    [
      'Dir::Cache::pkgcache "";',
      'Dir::Cache::srcpkgcache "";',
      'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };',
      'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };',
      'Acquire::Languages "none";',
      'APT::Install-Recommends "false";',
      "",
    ].join("\n"),
  );
  sh(
    `cd '${rootfs}' && find usr/share/doc -mindepth 1 ! -name copyright ! -type d -delete && find usr/share/doc -mindepth 1 -type d -empty -delete && rm -rf usr/share/man/* usr/share/info/* usr/share/groff/* usr/share/lintian/* usr/share/locale/* var/cache/apt/*.bin`,
    "slimming the rootfs",
  );
}

// npm as the node image ships it: /usr/local/lib/node_modules/npm with npm and npx on PATH. The version is the
// one package.json's packageManager names.
function addNodeAndNpm(rootfs, node, work) {
  const npmVersion = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager.split(
    "@",
  )[1];
  sh(`install -m 0755 '${node}' '${rootfs}/usr/local/bin/node'`, "copying node");
  sh(
    `cd '${work}' && npm pack npm@${npmVersion} --silent >/dev/null && mkdir -p '${rootfs}/usr/local/lib/node_modules/npm' && tar -xzf npm-${npmVersion}.tgz --strip-components=1 -C '${rootfs}/usr/local/lib/node_modules/npm' && ln -sf ../lib/node_modules/npm/bin/npm-cli.js '${rootfs}/usr/local/bin/npm' && ln -sf ../lib/node_modules/npm/bin/npx-cli.js '${rootfs}/usr/local/bin/npx'`,
    `npm pack npm@${npmVersion}`,
  );
}

function dockerImport(dir, tag, changes) {
  const flags = changes.map((c) => `--change '${c}'`).join(" ");
  sh(
    `tar --numeric-owner -C '${dir}' -c . | docker import ${flags} - '${tag}' >/dev/null`,
    `docker import ${tag}`,
  );
  say(`made ${tag}`);
}

// The files a distroless-like image keeps: every path the given packages installed (plus `extra`), with
// directories resolved through the rootfs's merged-/usr symlinks so that tar does not write through a symlink.
function distrolessFileList(rootfs, packages, extra = []) {
  const listed = spawnSync("chroot", [rootfs, "dpkg", "-L", ...packages], { encoding: "utf8" });
  if (listed.status !== 0) fail(`dpkg -L in the rootfs failed: ${listed.stderr.trim()}`);
  const paths = new Set(["bin", "sbin", "lib", "lib64", "etc/ssl/certs/ca-certificates.crt", ...extra]);
  for (const line of listed.stdout.split("\n")) {
    if (!line.startsWith("/") || line === "/.") continue;
    const full = join(rootfs, line);
    if (!existsSync(full)) continue; // dpkg lists diverted and removed files too
    const parent = realpathSync(dirname(full)).slice(rootfs.length + 1);
    paths.add(join(parent, line.split("/").pop()));
  }
  return [...paths].filter((p) => p && existsSync(join(rootfs, p))).sort();
}

// Copies the file set into `out` and adds what distroless images have besides packages: their users, /tmp,
// the home directories.
function makeDistroless(rootfs, out, files) {
  const list = `${out}.list`;
  writeFileSync(list, `${files.join("\n")}\n`);
  mkdirSync(out, { recursive: true });
  sh(
    `tar --numeric-owner --no-recursion -C '${rootfs}' -c -T '${list}' | tar --numeric-owner -C '${out}' -x`,
    "copying the distroless file set",
  );
  // The users distroless images define; 65532 is "nonroot".
  writeFileSync(
    join(out, "etc/passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
  );
  writeFileSync(join(out, "etc/group"), "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n");
  sh(
    `install -d -m 1777 '${out}/tmp' && install -d -m 0700 '${out}/root' && install -d -m 0700 -o 65532 -g 65532 '${out}/home/nonroot'`,
    "laying out the distroless image",
  );
}

// debootstrap mounts /proc and /sys in the target while it works and unmounts them at the end; never delete
// through a mount it left behind.
function removeWork(work) {
  const mounted = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1])
    .filter((mountpoint) => mountpoint?.startsWith(`${work}/`));
  if (mounted.length > 0)
    fail(`not removing ${work}: ${mounted.join(", ")} still mounted; unmount, then remove it`);
  rmSync(work, { recursive: true, force: true });
}

// Makes the two local base images when they are not there yet; returns their tags.
export function ensureLocalBaseImages() {
  const tags = localBaseTags();
  if (imageExists(tags.node) && imageExists(tags.distroless)) {
    say(`reusing ${tags.node} and ${tags.distroless}`);
    return tags;
  }
  if (process.getuid?.() !== 0) fail("making base images needs root (debootstrap, chroot); run as root");
  const node = ensureProjectNode();
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), "switchyard-base-"));
  try {
    const rootfs = join(work, "rootfs");
    debootstrap(rootfs, aptMirrors());
    makeDistroless(rootfs, join(work, "distroless"), distrolessFileList(rootfs, distrolessPackages));
    sh(`install -D -m 0755 '${node}' '${work}/distroless/nodejs/bin/node'`, "copying node");
    addNodeAndNpm(rootfs, node, work);
    const path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    dockerImport(rootfs, tags.node, [
      `ENV ${path}`,
      `ENV NODE_VERSION=${wantedNodeVersion()}`,
      'CMD ["node"]',
    ]);
    dockerImport(join(work, "distroless"), tags.distroless, [
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/nodejs/bin",
      "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
      "USER 65532:65532",
      "WORKDIR /home/nonroot",
      'ENTRYPOINT ["/nodejs/bin/node"]',
    ]);
  } finally {
    removeWork(work);
  }
  say(`base images made in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  return tags;
}

// The bases of upstream's own images, for building them side by side with ours
// (packages/testbed/upstream/images):
//   switchyard-local/static-debian12:nonroot     distroless static-like (CoreDNS's base): base-files, netbase,
//                                                 tzdata, ca-certificates; no libc, no shell, uid 65532
//   switchyard-local/distroless-iptables:bookworm distroless-like with what kube-proxy calls (kube-proxy's
//                                                 base): iptables (both backends), nft, ipset, conntrack and
//                                                 the libraries they link, no shell
const upstreamRecipe = "1";
const staticPackages = ["base-files", "netbase", "tzdata", "ca-certificates"];
const iptablesTools = ["iptables", "nftables", "ipset", "conntrack"];

export function upstreamBaseTags() {
  return {
    static: `switchyard-local/static-debian12:nonroot-r${upstreamRecipe}`,
    iptables: `switchyard-local/distroless-iptables:${suite}-r${upstreamRecipe}`,
  };
}

// The installed packages `packages` need at run time: the closure of their Depends and Pre-Depends in the
// rootfs's dpkg database (of alternatives, the first one installed).
function dependencyClosure(rootfs, packages) {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${...} is dpkg-query's format syntax
  const statusFormat = "-f=${Status}";
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${...} is dpkg-query's format syntax
  const dependsFormat = "-f=${Depends}, ${Pre-Depends}";
  const installed = (name) =>
    spawnSync("chroot", [rootfs, "dpkg-query", "-W", statusFormat, name], { encoding: "utf8" }).stdout ===
    "install ok installed";
  const seen = new Set();
  const queue = [...packages];
  while (queue.length > 0) {
    const name = queue.shift();
    if (seen.has(name)) continue;
    seen.add(name);
    const q = spawnSync("chroot", [rootfs, "dpkg-query", "-W", dependsFormat, name], {
      encoding: "utf8",
    });
    if (q.status !== 0) fail(`dpkg-query ${name} in the rootfs failed: ${q.stderr.trim()}`);
    for (const clause of q.stdout.split(",")) {
      const options = clause.split("|").map((o) => o.trim().split(/[\s:(]/)[0]);
      const pick = options.find((o) => o && installed(o));
      if (pick && !seen.has(pick)) queue.push(pick);
    }
  }
  return [...seen].sort();
}

// iptables, ip6tables and their -save/-restore are update-alternatives links made by the package's postinst,
// not files dpkg lists: keep the links and what /etc/alternatives points them at (Debian's default, nft).
function alternativesLinks(rootfs) {
  const names = readdirSync(join(rootfs, "etc/alternatives")).filter((n) =>
    /^(ip6?tables|ebtables|arptables)/.test(n),
  );
  return names.flatMap((n) => [`etc/alternatives/${n}`, `usr/sbin/${n}`]);
}

// Makes the two upstream base images when they are not there yet; returns their tags.
export function ensureUpstreamBaseImages() {
  const tags = upstreamBaseTags();
  if (imageExists(tags.static) && imageExists(tags.iptables)) {
    say(`reusing ${tags.static} and ${tags.iptables}`);
    return tags;
  }
  if (process.getuid?.() !== 0) fail("making base images needs root (debootstrap, chroot); run as root");
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), "switchyard-base-"));
  try {
    const rootfs = join(work, "rootfs");
    debootstrap(rootfs, aptMirrors(), iptablesTools);
    const config = [
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
    ];
    makeDistroless(rootfs, join(work, "static"), distrolessFileList(rootfs, staticPackages));
    dockerImport(join(work, "static"), tags.static, [...config, "USER 65532:65532", "WORKDIR /home/nonroot"]);
    // The closure of the tools only: ca-certificates' own dependencies (debconf, openssl) only generate the
    // bundle at install time, and distroless images keep just the files.
    const packages = [...new Set([...distrolessPackages, ...dependencyClosure(rootfs, iptablesTools)])];
    say(`distroless-iptables packages: ${packages.join(" ")}`);
    makeDistroless(
      rootfs,
      join(work, "iptables"),
      distrolessFileList(rootfs, packages, alternativesLinks(rootfs)),
    );
    dockerImport(join(work, "iptables"), tags.iptables, config);
  } finally {
    removeWork(work);
  }
  say(`upstream base images made in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  return tags;
}

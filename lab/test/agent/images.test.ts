import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ImageLayer } from "../../src/agent/image-catalog.js";
import { type ImageContext, type Runnable, resolveImage } from "../../src/agent/images.js";
import { repoRoot } from "../../src/self.js";

const busybox = { path: "/bin/busybox", applets: new Set(["sh", "nslookup", "wget", "nc", "busybox"]) };
const binaries: Record<string, string> = {
  agnhost: "/cache/agnhost",
  coredns: "/cache/coredns",
  "kube-proxy": "/cache/kube-proxy",
};
const hostPrograms = new Set(["dig", "nginx"]);
const ctx: ImageContext = {
  repoRoot,
  echo: ["node", "echo.js"],
  node: "node",
  upstream: (name) => binaries[name],
  busybox: () => busybox,
  hostProgram: (name) => (hostPrograms.has(name) ? `/usr/bin/${name}` : undefined),
  porterPair: { cert: "/lab/images/porter/localhost.crt", key: "/lab/images/porter/localhost.key" },
};

const argvOf = (r: Runnable) => (r.kind === "process" ? r.argv : r);
const layerOf = (r: Runnable): ImageLayer | undefined => (r.kind === "process" ? r.layer : undefined);
const agnhost = "registry.k8s.io/e2e-test-images/agnhost:2.56";

describe("images: the image's entrypoint and cmd, the pod's command and args, as a runtime combines them", () => {
  test("args replace the cmd after the entrypoint; a command replaces both", () => {
    const run = (c: { command?: string[]; args?: string[] }) =>
      resolveImage({ name: "a", image: agnhost, ...c }, ctx);
    assert.deepEqual(argvOf(run({})), ["/agnhost", "pause"]);
    assert.deepEqual(argvOf(run({ args: ["netexec", "--http-port=8080"] })), [
      "/agnhost",
      "netexec",
      "--http-port=8080",
    ]);
    assert.deepEqual(argvOf(run({ command: ["sh", "-c"], args: ["dig +short x"] })), [
      "sh",
      "-c",
      "dig +short x",
    ]);
    assert.deepEqual(argvOf(run({ command: ["/coredns"], args: ["-conf", "/etc/coredns/Corefile"] })), [
      "/coredns",
      "-conf",
      "/etc/coredns/Corefile",
    ]);
  });

  test("$(VAR) in command and args expands from the container's environment", () => {
    const run = resolveImage({ name: "a", image: agnhost, args: ["netexec", "--http-port=$(PORT)"] }, ctx, {
      PORT: "8081",
    });
    assert.deepEqual(argvOf(run), ["/agnhost", "netexec", "--http-port=8081"]);
  });

  test("an image without an entrypoint or cmd needs a command", () => {
    const run = resolveImage({ name: "p", image: "registry.k8s.io/kube-proxy:v1.37.2" }, ctx);
    assert.deepEqual(run, {
      kind: "unknown",
      message: "image registry.k8s.io/kube-proxy:v1.37.2 has no entrypoint: give a command",
    });
  });
});

describe("images: the files each known image lays over the host's", () => {
  test("agnhost: the release's agnhost and CoreDNS, agnhost-2, porter's TLS pair, /uploads", () => {
    assert.deepEqual(layerOf(resolveImage({ name: "a", image: agnhost }, ctx)), {
      name: "agnhost",
      entries: [
        { path: "/agnhost", link: "/cache/agnhost" },
        { path: "/coredns", link: "/cache/coredns" },
        { path: "/agnhost-2", link: "agnhost" },
        { path: "/localhost.crt", copy: "/lab/images/porter/localhost.crt" },
        { path: "/localhost.key", copy: "/lab/images/porter/localhost.key" },
        { path: "/uploads", dir: true },
      ],
    });
  });

  test("busybox under every name it goes by: its applets first on PATH, /bin/sh busybox's, cmd sh", () => {
    for (const image of [
      "busybox",
      "busybox:1.36",
      "docker.io/library/busybox:1.36.1",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
    ]) {
      const run = resolveImage({ name: "b", image }, ctx);
      assert.deepEqual(argvOf(run), ["sh"], image);
      assert.deepEqual(layerOf(run)?.entries, [
        { path: "/usr/local/bin/sh", link: "/bin/busybox" },
        { path: "/usr/local/bin/nslookup", link: "/bin/busybox" },
        { path: "/usr/local/bin/wget", link: "/bin/busybox" },
        { path: "/usr/local/bin/nc", link: "/bin/busybox" },
        { path: "/usr/bin/sh", link: "/bin/busybox" },
      ]);
    }
    // kubectl run's `-- nslookup kubernetes.default` gives args, not a command: the image has no entrypoint.
    assert.deepEqual(argvOf(resolveImage({ name: "b", image: "busybox", args: ["nslookup", "x"] }, ctx)), [
      "nslookup",
      "x",
    ]);
  });

  test("the DNS test image (either name) has CoreDNS and the host's dig; nginx runs in the foreground", () => {
    for (const image of [
      "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1",
      "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7",
    ]) {
      const run = resolveImage({ name: "d", image, command: ["sh", "-c", "dig x"] }, ctx);
      assert.deepEqual(layerOf(run)?.entries, [{ path: "/coredns", link: "/cache/coredns" }], image);
    }
    const web = resolveImage({ name: "w", image: "registry.k8s.io/e2e-test-images/nginx:1.27.0-2" }, ctx);
    assert.deepEqual(argvOf(web), ["nginx", "-g", "daemon off;"]);
    assert.deepEqual(layerOf(web)?.entries, [
      { path: "/var/log/nginx/access.log", link: "/dev/stdout" },
      { path: "/var/log/nginx/error.log", link: "/dev/stderr" },
    ]);
  });

  test("a host program or a binary the image needs is missing: the reason and the fix", () => {
    const bare: ImageContext = {
      ...ctx,
      busybox: () => undefined,
      hostProgram: () => undefined,
      upstream: () => undefined,
    };
    const cases: Array<[string, string]> = [
      [
        "busybox:1.36",
        "image busybox:1.36 runs the host's /bin/busybox, which is missing (apt-get install busybox-static)",
      ],
      [
        "registry.k8s.io/e2e-test-images/nginx:1.27.0-2",
        "image registry.k8s.io/e2e-test-images/nginx:1.27.0-2 runs the host's nginx, which is missing (apt-get install nginx)",
      ],
      [
        agnhost,
        `image ${agnhost} runs the agnhost binary of packages/testbed/upstream, which is missing (npx switchyard-lab upstream build --only agnhost)`,
      ],
    ];
    for (const [image, message] of cases)
      assert.deepEqual(resolveImage({ name: "x", image }, bare), { kind: "unknown", message });
  });

  test("the lab's own images and apps stay the host's programs; unknown images are named", () => {
    assert.deepEqual(resolveImage({ name: "e", image: "switchyard/echo", args: ["--port", "8080"] }, ctx), {
      kind: "process",
      argv: ["node", "echo.js", "--port", "8080"],
    });
    assert.deepEqual(resolveImage({ name: "p", image: "registry.k8s.io/pause:3.10" }, ctx), { kind: "none" });
    assert.deepEqual(resolveImage({ name: "u", image: "quay.io/nobody/thing:1" }, ctx), {
      kind: "unknown",
      message: "image quay.io/nobody/thing:1 is not known to the switchyard lab runtime",
    });
  });
});

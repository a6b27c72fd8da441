import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveImage } from "../../src/agent/images.js";
import { repoRoot } from "../../src/self.js";

const busybox = { path: "/bin/busybox", applets: new Set(["sh", "nslookup", "wget", "sleep"]) };
const ctx = {
  repoRoot,
  echo: ["node", "echo.js"],
  node: "node",
  upstream: (name: string) => (name === "agnhost" ? "/cache/agnhost" : undefined),
  busybox: () => busybox,
};

describe("the e2e suite's basic images", () => {
  test("busybox under every name it goes by; its default command is sh", () => {
    for (const image of [
      "busybox",
      "busybox:1.36",
      "docker.io/library/busybox:1.36.1",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
    ])
      assert.deepEqual(resolveImage({ name: "b", image }, ctx), {
        kind: "process",
        argv: ["/bin/busybox", "sh"],
      });
  });

  test("busybox: args alone are the command (no entrypoint); commands are applets under any path", () => {
    // kubectl run's `-- nslookup kubernetes.default` gives args, not a command.
    const run = (c: { command?: string[]; args?: string[] }) =>
      resolveImage({ name: "b", image: "busybox", ...c }, ctx);
    assert.deepEqual(run({ args: ["nslookup", "kubernetes.default"] }), {
      kind: "process",
      argv: ["/bin/busybox", "nslookup", "kubernetes.default"],
    });
    assert.deepEqual(run({ command: ["/bin/sh", "-c"], args: ["wget -qO- x; sleep 1"] }), {
      kind: "process",
      argv: ["/bin/busybox", "sh", "-c", "wget -qO- x; sleep 1"],
    });
    assert.deepEqual(run({ command: ["busybox", "sleep", "5"] }), {
      kind: "process",
      argv: ["/bin/busybox", "sleep", "5"],
    });
    assert.deepEqual(run({ command: ["/usr/bin/curl"] }), {
      kind: "unknown",
      message: "command /usr/bin/curl is not in image busybox (not a busybox applet)",
    });
    assert.deepEqual(
      resolveImage({ name: "b", image: "busybox:1.36" }, { ...ctx, busybox: () => undefined }),
      {
        kind: "unknown",
        message:
          "image busybox:1.36 runs the host's /bin/busybox, which is missing (apt-get install busybox-static)",
      },
    );
  });

  test("agnhost: lab/upstream's binary, entrypoint /agnhost, the pod's args", () => {
    const image = "registry.k8s.io/e2e-test-images/agnhost:2.56";
    assert.deepEqual(resolveImage({ name: "a", image, args: ["netexec", "--http-port=8080"] }, ctx), {
      kind: "process",
      argv: ["/cache/agnhost", "netexec", "--http-port=8080"],
    });
    assert.deepEqual(resolveImage({ name: "a", image, command: ["/agnhost", "pause"] }, ctx), {
      kind: "process",
      argv: ["/cache/agnhost", "pause"],
    });
    assert.deepEqual(resolveImage({ name: "a", image, command: ["/bin/sh"] }, ctx), {
      kind: "unknown",
      message: `command /bin/sh is not in image ${image} (it has /agnhost)`,
    });
  });
});

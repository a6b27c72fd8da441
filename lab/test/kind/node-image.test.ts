import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chooseNodeImage, localNodeImageBuild, type NodeImageDeps } from "../../src/kind/node-image.js";

/** An engine that has `present` and can pull `pullable`; records what was run and said. */
function engine(present: string[], pullable: string[]) {
  const ran: string[] = [];
  let built = 0;
  const deps: NodeImageDeps = {
    docker: "docker",
    exec: async (argv) => {
      ran.push(argv.slice(1, 3).join(" "));
      const image = argv.at(-1) ?? "";
      if (argv[1] === "image" && !present.includes(image)) throw new Error(`Error: No such image: ${image}`);
      if (argv[1] === "pull" && !pullable.includes(image))
        throw new Error(
          `Pulling...\nError response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`,
        );
      return "";
    },
    buildLocal: async () => {
      built++;
      return "switchyard-local/kind-node:v1.37.2-r2";
    },
    say: () => {},
  };
  return { deps, ran, built: () => built };
}

/** An exec that records each command and answers `stdout`. */
const recorder = (ran: string[][], stdout: string) => async (argv: readonly string[]) => {
  ran.push([...argv]);
  return stdout;
};

describe("the kind node image", () => {
  test("one the engine has is used as it is, without a pull", async () => {
    const e = engine(["kindest/node:v1.37.2"], []);
    assert.deepEqual(await chooseNodeImage("kindest/node:v1.37.2", true, e.deps), {
      image: "kindest/node:v1.37.2",
      how: "present",
    });
    assert.deepEqual(e.ran, ["image inspect"]);
  });

  test("a registry that answers: pulled", async () => {
    const e = engine([], ["kindest/node:v1.37.2"]);
    assert.equal((await chooseNodeImage("kindest/node:v1.37.2", true, e.deps)).how, "pulled");
    assert.equal(e.built(), 0);
  });

  test("the default where nothing can be pulled: built here", async () => {
    const e = engine([], []);
    assert.deepEqual(await chooseNodeImage("kindest/node:v1.37.2", true, e.deps), {
      image: "switchyard-local/kind-node:v1.37.2-r2",
      how: "built",
    });
    assert.deepEqual(e.ran, ["image inspect", "pull kindest/node:v1.37.2"]);
  });

  test("an image the user named is never replaced: one line with docker's reason", async () => {
    const e = engine([], []);
    await assert.rejects(chooseNodeImage("example.com/node:v1", false, e.deps), (err: Error) => {
      assert.equal(
        err.message,
        '--node-image example.com/node:v1: not on this engine, and docker pull failed: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host',
      );
      return true;
    });
    assert.equal(e.built(), 0);
  });

  test("built here only on Linux as root: on a Mac, or without root, one line and no script run", async () => {
    for (const host of [
      { platform: "darwin" as const, uid: 501 },
      { platform: "linux" as const, uid: 1000 },
    ]) {
      const ran: string[][] = [];
      const build = localNodeImageBuild("/repo", recorder(ran, ""), host);
      await assert.rejects(build(), {
        message:
          "a node image is built here only on Linux as root (debootstrap and chroot); pass --node-image with a kindest/node release that can be pulled",
      });
      assert.deepEqual(ran, []);
    }
    const ran: string[][] = [];
    const asRoot = localNodeImageBuild(
      "/repo",
      recorder(ran, "[kind-node] phase 1/6\nswitchyard-local/kind-node:v1.37.2-r2\n"),
      { platform: "linux", uid: 0 },
    );
    assert.equal(await asRoot(), "switchyard-local/kind-node:v1.37.2-r2");
    assert.equal(ran[0]?.[1], "/repo/scripts/kind-node-image.mjs");
  });
});

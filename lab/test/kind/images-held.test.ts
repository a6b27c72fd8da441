import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  fullReference,
  imagesToLoad,
  loadImagesNodesLack,
  type NodeImages,
  parseNodeImages,
} from "../../src/kind/images-held.js";

const echo = "switchyard/echo:0.1.0";
const loadgen = "switchyard/loadgen:0.1.0";
const holds = (node: string, refs: Record<string, string>): NodeImages => ({
  node,
  refs: Object.fromEntries(Object.entries(refs).map(([r, id]) => [fullReference(r), [id]])),
});

describe("kind: which images the nodes lack", () => {
  test("references as containerd writes them", () => {
    assert.equal(fullReference(echo), "docker.io/switchyard/echo:0.1.0");
    assert.equal(fullReference("busybox"), "docker.io/library/busybox:latest");
    assert.equal(fullReference("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
    assert.equal(fullReference("localhost:5000/x"), "localhost:5000/x:latest");
    assert.equal(fullReference("docker.io/switchyard/echo@sha256:ab"), "docker.io/switchyard/echo@sha256:ab");
  });

  test("crictl's answer: each tag with the image's ID and its digests", () => {
    const out = JSON.stringify({
      images: [
        {
          id: "sha256:e1",
          repoTags: ["docker.io/switchyard/echo:0.1.0", "docker.io/switchyard/echo:dev"],
          repoDigests: ["docker.io/switchyard/echo@sha256:m1"],
        },
        { id: "sha256:p", repoTags: [], repoDigests: ["registry.k8s.io/pause@sha256:p2"] },
      ],
    });
    assert.deepEqual(parseNodeImages("w1", out), {
      node: "w1",
      refs: {
        "docker.io/switchyard/echo:0.1.0": ["sha256:e1", "sha256:m1"],
        "docker.io/switchyard/echo:dev": ["sha256:e1", "sha256:m1"],
      },
    });
  });

  test("nothing to build or load when every node holds the engine's images", () => {
    const engine = { [echo]: "sha256:e1", [loadgen]: "sha256:l1" };
    const nodes = ["w1", "w2"].map((n) => holds(n, { [echo]: "sha256:e1", [loadgen]: "sha256:l1" }));
    assert.deepEqual(imagesToLoad([echo, loadgen], engine, nodes), { build: [], loads: [] });
  });

  test("a node that lacks an image, or holds a stale one, gets it; nodes lacking the same share a load", () => {
    const engine = { [echo]: "sha256:e2", [loadgen]: "sha256:l1" };
    const nodes = [
      holds("cp", { [echo]: "sha256:e2", [loadgen]: "sha256:l1" }),
      holds("w1", { [echo]: "sha256:e1", [loadgen]: "sha256:l1" }),
      holds("w2", { [loadgen]: "sha256:l1" }),
      holds("w3", {}),
    ];
    assert.deepEqual(imagesToLoad([echo, loadgen], engine, nodes), {
      build: [],
      loads: [
        { images: [echo], nodes: ["w1", "w2"] },
        { images: [echo, loadgen], nodes: ["w3"] },
      ],
    });
  });

  test("built only when a node lacks it and the engine has none; kept where the engine has none but every node does", () => {
    const nodes = [holds("w1", { [loadgen]: "sha256:l1" }), holds("w2", { [loadgen]: "sha256:l1" })];
    assert.deepEqual(imagesToLoad([echo, loadgen], {}, nodes), {
      build: [echo],
      loads: [{ images: [echo], nodes: ["w1", "w2"] }],
    });
  });

  test("the machine: asks every node and the engine, builds what is missing, loads only what nodes lack", async () => {
    const commands: string[] = [];
    const loads: string[] = [];
    const engine: Record<string, string> = { [loadgen]: "sha256:l1" };
    const built: string[][] = [];
    const said = await loadImagesNodesLack(
      {
        exec: async (argv) => {
          commands.push(argv.join(" "));
          if (argv[1] === "image") {
            const id = engine[argv.at(-1) ?? ""];
            if (!id) throw new Error("No such image");
            return `${id}\n`;
          }
          if (argv[2] === "w2") throw new Error("crictl: not found");
          const tags = argv[2] === "w1" ? [`docker.io/${loadgen}`] : [];
          return JSON.stringify({ images: [{ id: "sha256:l1", repoTags: tags }] });
        },
        docker: "docker",
        build: async (images) => {
          built.push([...images]);
          engine[echo] = "sha256:e1";
        },
        load: async (images, nodes) => {
          loads.push(`${images.join(" ")} -> ${nodes.join(" ")}`);
        },
      },
      [echo, loadgen],
      ["w1", "w2"],
    );
    assert.deepEqual(built, [[echo]]);
    // w2 could not say what it holds: it gets everything.
    assert.deepEqual(loads.sort(), [`${echo} -> w1`, `${echo} ${loadgen} -> w2`]);
    assert.ok(commands.includes("docker exec w1 crictl images -o json"));
    assert.equal(said, `built ${echo}; loaded ${echo} into w1; ${echo}, ${loadgen} into w2`);
  });
});

import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { ryukAvailable, ryukImage } from "../../src/kind/ryuk.js";

// Whether a test's nodes are left to Ryuk, decided against a fake docker: on where its image is or can be had,
// off (for the whole process, with one line) where neither, never asked when the user turned it off.
describe("Ryuk for a test's kind nodes", () => {
  const saved = process.env.TESTCONTAINERS_RYUK_DISABLED;
  afterEach(() => {
    if (saved === undefined) delete process.env.TESTCONTAINERS_RYUK_DISABLED;
    else process.env.TESTCONTAINERS_RYUK_DISABLED = saved;
  });
  const docker =
    (answers: { inspect: boolean; pull: boolean }, calls: string[]) => async (argv: readonly string[]) => {
      calls.push(argv.slice(1, 3).join(" "));
      if (argv[1] === "image" && !answers.inspect) throw new Error("No such image");
      if (argv[1] === "pull" && !answers.pull) throw new Error("no such host");
      return "";
    };

  test("on when the image is on the engine, or pulled", async () => {
    delete process.env.TESTCONTAINERS_RYUK_DISABLED;
    const calls: string[] = [];
    assert.equal(
      await ryukAvailable(docker({ inspect: true, pull: false }, calls), "docker", () => {}),
      true,
    );
    assert.equal(
      await ryukAvailable(docker({ inspect: false, pull: true }, calls), "docker", () => {}),
      true,
    );
    assert.deepEqual(calls, ["image inspect", "image inspect", `pull ${ryukImage()}`]);
    assert.equal(process.env.TESTCONTAINERS_RYUK_DISABLED, undefined);
  });

  test("off where no registry answers: one line, and testcontainers told for the process", async () => {
    delete process.env.TESTCONTAINERS_RYUK_DISABLED;
    const lines: string[] = [];
    assert.equal(
      await ryukAvailable(docker({ inspect: false, pull: false }, []), "docker", (l) => lines.push(l)),
      false,
    );
    assert.equal(process.env.TESTCONTAINERS_RYUK_DISABLED, "true");
    assert.deepEqual(lines, [
      `Ryuk off: ${ryukImage()} is not on this engine and cannot be pulled; down removes the nodes`,
    ]);
  });

  test("TESTCONTAINERS_RYUK_DISABLED=true: off without asking the engine", async () => {
    process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
    const calls: string[] = [];
    assert.equal(
      await ryukAvailable(docker({ inspect: true, pull: true }, calls), "docker", () => {}),
      false,
    );
    assert.deepEqual(calls, []);
  });
});

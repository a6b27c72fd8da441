// The public packages as a user gets them from npm: packed, installed into an empty folder, then imported from
// plain Node and from TypeScript. Catches a broken `exports` map, missing .d.ts files, and a dependency that is
// only satisfied by the monorepo's root node_modules.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { promisify } from "node:util";
import { typecheckStrictConsumer } from "./packaging/strict-consumer.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const publicPackages = readdirSync(join(root, "packages"))
  .map((dir) => ({
    dir: join(root, "packages", dir),
    manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")),
  }))
  .filter((p) => !p.manifest.private);

describe("packaging", () => {
  const project = mkdtempSync(join(tmpdir(), "sy-pack-"));

  before(async () => {
    const tarballs: string[] = [];
    for (const p of publicPackages) {
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", project], { cwd: p.dir });
      const [info] = JSON.parse(stdout) as Array<{ filename: string }>;
      assert.ok(info, `npm pack printed nothing for ${p.manifest.name}`);
      tarballs.push(join(project, info.filename));
    }
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    await run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--loglevel=error",
        ...tarballs,
        `@types/node@${rootManifest.devDependencies["@types/node"]}`,
      ],
      { cwd: project, timeout: 300_000 },
    );
  });

  test("there are five public packages, each with a types-first exports map and a files whitelist", () => {
    assert.deepEqual(publicPackages.map((p) => p.manifest.name).sort(), [
      "@switchyard/basics",
      "@switchyard/kube",
      "@switchyard/proxier",
      "@switchyard/resolver",
      "@switchyard/slice-controller",
    ]);
    for (const { manifest } of publicPackages) {
      const conditions = Object.keys(manifest.exports["."]);
      assert.equal(conditions[0], "types", `${manifest.name}: "types" must come first in exports`);
      assert.ok(
        Array.isArray(manifest.files) && manifest.files.length > 0,
        `${manifest.name}: no files whitelist`,
      );
    }
  });

  test("the tarballs hold compiled JavaScript, declarations and the README, and no sources or tests", async () => {
    for (const p of publicPackages) {
      const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: p.dir });
      const [info] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
      const files = info?.files.map((f) => f.path) ?? [];
      assert.ok(files.includes("dist/index.js"), `${p.manifest.name}: no dist/index.js`);
      assert.ok(files.includes("dist/index.d.ts"), `${p.manifest.name}: no dist/index.d.ts`);
      assert.ok(files.includes("README.md"), `${p.manifest.name}: no README.md`);
      assert.deepEqual(
        files.filter((f) => f.startsWith("src/") || f.startsWith("test/")),
        [],
        p.manifest.name,
      );
    }
  });

  test("every package imports from a plain Node script", async () => {
    const script = publicPackages
      .map(
        (p, i) =>
          `import * as m${i} from "${p.manifest.name}"; if (typeof m${i} !== "object") process.exit(1);`,
      )
      .join("\n");
    writeFileSync(
      join(project, "smoke.mjs"),
      `${script}\nconsole.log("imported ${publicPackages.length}");\n`,
    );
    const { stdout } = await run(process.execPath, ["smoke.mjs"], { cwd: project });
    assert.equal(stdout.trim(), `imported ${publicPackages.length}`);
  });

  test("every entry point typechecks with skipLibCheck off, without the optional @kubernetes/client-node", async () => {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    await typecheckStrictConsumer(
      project,
      publicPackages.map((p) => p.manifest),
      tsc,
    );
  });
});

// The public packages as a user gets them from npm: packed, installed into an empty folder, then imported from
// plain Node and from TypeScript. Catches a broken `exports` map, missing .d.ts files, and a dependency that is
// only satisfied by the monorepo's root node_modules. Then runs the README examples marked as running there
// (test/readme-examples.ts says how a block is marked).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { before, describe, test } from "node:test";
import { promisify } from "node:util";
import { readmeExamples } from "./readme-examples.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const publicPackages = readdirSync(join(root, "packages"))
  .map((dir) => ({
    dir: join(root, "packages", dir),
    manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")),
  }))
  .filter((p) => !p.manifest.private);
// The READMEs a registry user reads: the public packages' and the programs'.
const readmes = [
  ...publicPackages.map((p) => relative(root, join(p.dir, "README.md"))),
  ...readdirSync(join(root, "apps")).map((dir) => `apps/${dir}/README.md`),
];

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

  test("every package typechecks from a strict TypeScript file", async () => {
    const lines = publicPackages.map(
      (p, i) =>
        `import * as m${i} from "${p.manifest.name}";\nexport const k${i}: string[] = Object.keys(m${i});`,
    );
    writeFileSync(join(project, "consumer.ts"), `${lines.join("\n")}\n`);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          strict: true,
          noEmit: true,
          types: ["node"],
          skipLibCheck: true,
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    try {
      await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project });
    } catch (err) {
      assert.fail(`consumer.ts does not typecheck:\n${(err as { stdout?: string }).stdout}`);
    }
  });

  describe("README examples, run from the installed tarballs", () => {
    const files: string[] = [];
    for (const readme of readmes) {
      const { runnable, errors } = readmeExamples(readFileSync(join(root, readme), "utf8"), readme);
      test(`${readme}: every ts or shell block says whether it runs`, () => {
        assert.deepEqual(errors, []);
      });
      for (const example of runnable) {
        test(`${example.where} prints what the README shows`, async () => {
          const file = `readme-${example.where.replace(/[^a-z0-9]+/gi, "-")}.ts`;
          writeFileSync(join(project, file), example.code);
          files.push(file);
          const { stdout, stderr } = await run(process.execPath, [file], { cwd: project, timeout: 20_000 });
          assert.equal(stderr, "", `${example.where} wrote to stderr`);
          assert.equal(stdout.trimEnd(), example.expected.trimEnd());
        });
      }
    }

    // A reader who saves an example as a .ts file gets it past a strict compiler too, not only past Node.
    test("the examples typecheck in a strict NodeNext project", async () => {
      assert.ok(files.length > 0, "no example ran");
      writeFileSync(
        join(project, "tsconfig.readme.json"),
        JSON.stringify({
          compilerOptions: {
            module: "NodeNext",
            moduleResolution: "NodeNext",
            target: "ES2022",
            strict: true,
            noEmit: true,
            types: ["node"],
            skipLibCheck: true,
          },
          files,
        }),
      );
      const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
      try {
        await run(process.execPath, [tsc, "-p", "tsconfig.readme.json"], { cwd: project });
      } catch (err) {
        assert.fail(`a README example does not typecheck:\n${(err as { stdout?: string }).stdout}`);
      }
    });
  });
});

// The public packages as a user gets them from npm: packed, installed into an empty folder, then imported from
// plain Node and from TypeScript. Catches a broken `exports` map, missing .d.ts files, and a dependency that is
// only satisfied by the monorepo's root node_modules. The three programs are packed and installed with them, and
// run through npx from that folder as a user would after a publish. Then runs the README examples marked as
// running there (test/readme-examples.ts says how a block is marked).
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { typecheckStrictConsumer } from "./packaging/strict-consumer.js";
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
/** The programs (apps/*), published with their bins. */
const publicPrograms = readdirSync(join(root, "apps"))
  .map((dir) => ({
    dir: join(root, "apps", dir),
    manifest: JSON.parse(readFileSync(join(root, "apps", dir, "package.json"), "utf8")),
  }))
  .filter((p) => !p.manifest.private);

describe("packaging", () => {
  const project = mkdtempSync(join(tmpdir(), "sy-pack-"));
  const tarballs: string[] = [];

  /** What each package's `npm pack --json` listed, by package name. */
  const packedFiles = new Map<string, string[]>();

  // The blank project holds an install of every tarball (about 25 MB); a run leaves none behind.
  after(() => rmSync(project, { recursive: true, force: true }));

  before(async () => {
    // The packs run at once: each works in its own package folder (its prepack copies the LICENSE there).
    const packed = await Promise.all(
      [...publicPackages, ...publicPrograms].map(async (p) => {
        const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", project], {
          cwd: p.dir,
        });
        const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
        assert.ok(info, `npm pack printed nothing for ${p.manifest.name}`);
        packedFiles.set(
          p.manifest.name,
          info.files.map((f) => f.path),
        );
        return join(project, info.filename);
      }),
    );
    tarballs.push(...packed);
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
      const files = packedFiles.get(p.manifest.name) ?? [];
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
            skipLibCheck: false,
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

  describe("programs and what a registry checks", () => {
    programAndRegistryTests(project, tarballs);
  });
});

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesUnder(dir, path) : [path];
  });
}

/** Runs `npx --no-install <args>` in `cwd`: the exit code and what it printed on both streams. */
async function npx(cwd: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run("npx", ["--no-install", ...args], { cwd, timeout: 30_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

/** A DNS query for `name` IN A with recursion desired, built by hand: the test has no DNS library of its own. */
function dnsQuery(id: number, name: string): Buffer {
  const labels = name.split(".").flatMap((label) => [Buffer.from([label.length]), Buffer.from(label)]);
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

/** A UDP port nothing listens on right now (the kernel's choice for port 0). */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  socket.bind(0, "127.0.0.1");
  await once(socket, "listening");
  const { port } = socket.address();
  socket.close();
  return port;
}

/** Sends `query` to 127.0.0.1:port until a reply comes (the server may still be binding), at most `tries` times. */
async function askUdp(port: number, query: Buffer, tries = 10): Promise<Buffer> {
  const socket = createSocket("udp4");
  try {
    for (let i = 0; i < tries; i++) {
      socket.send(query, port, "127.0.0.1");
      const reply = await Promise.race([
        once(socket, "message").then(([msg]) => msg as Buffer),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 500)),
      ]);
      if (reply) return reply;
    }
    throw new Error(`no reply from 127.0.0.1:${port}`);
  } finally {
    socket.close();
  }
}

/**
 * The programs as npx runs them from a project that installed the tarballs, and what a registry user's tools
 * check in every tarball: the LICENSE, source maps whose sources are there, publint and attw.
 */
function programAndRegistryTests(project: string, tarballs: readonly string[]): void {
  const shipped = [...publicPackages, ...publicPrograms].map((p) => ({
    name: p.manifest.name as string,
    dir: join(project, "node_modules", p.manifest.name),
  }));

  test("the three programs ship their one bin each, and cluster-dns's image-only coredns stays in the image", () => {
    assert.deepEqual(publicPrograms.map((p) => p.manifest.name).sort(), [
      "@switchyard/cluster-dns",
      "@switchyard/kube-proxy-app",
      "@switchyard/slice-controller-app",
    ]);
    for (const { manifest } of publicPrograms) {
      // npx runs the only bin, or one named like the package's unscoped name.
      const bins = Object.values(manifest.bin as Record<string, string>);
      assert.equal(bins.length, 1, `${manifest.name}: npx needs one bin`);
      const files = filesUnder(join(project, "node_modules", manifest.name));
      assert.ok(
        files.includes((bins[0] as string).replace(/^\.\//, "")),
        `${manifest.name}: bin not shipped`,
      );
      assert.ok(files.includes("dist/main.js") || files.includes("dist/run.js"), `${manifest.name}: no dist`);
      assert.deepEqual(
        files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f === "bin/coredns"),
        [],
        manifest.name,
      );
    }
    const dockerfile = readFileSync(join(root, "apps/cluster-dns/Dockerfile"), "utf8");
    assert.match(dockerfile, /COPY --from=build \/src\/apps\/cluster-dns\/bin\/coredns \/coredns/);
    assert.ok(existsSync(join(root, "apps/cluster-dns/bin/coredns")));
  });

  test("every tarball holds the repository's LICENSE", () => {
    const license = readFileSync(join(root, "LICENSE"), "utf8");
    assert.match(license, /Apache License\s+Version 2\.0/);
    for (const p of shipped) {
      assert.ok(existsSync(join(p.dir, "LICENSE")), `${p.name}: no LICENSE`);
      assert.equal(readFileSync(join(p.dir, "LICENSE"), "utf8"), license, `${p.name}: LICENSE differs`);
    }
  });

  test("no shipped source map names a source that is neither shipped nor embedded in the map", () => {
    let maps = 0;
    const missing: string[] = [];
    for (const p of shipped) {
      for (const file of filesUnder(p.dir).filter((f) => f.endsWith(".map"))) {
        maps++;
        const map = JSON.parse(readFileSync(join(p.dir, file), "utf8")) as {
          sourceRoot?: string;
          sources: string[];
          sourcesContent?: Array<string | null>;
        };
        map.sources.forEach((source, i) => {
          const onDisk = existsSync(join(p.dir, dirname(file), map.sourceRoot ?? "", source));
          if (!onDisk && typeof map.sourcesContent?.[i] !== "string")
            missing.push(`${p.name}/${file}: ${source}`);
        });
      }
    }
    assert.ok(maps > 0, "no source maps shipped at all");
    assert.deepEqual(missing, []);
  });

  test("publint (strict) and attw (ESM-only profile) find nothing wrong in any tarball", async () => {
    assert.equal(tarballs.length, shipped.length);
    const bin = (name: string) => join(root, "node_modules", ".bin", name);
    const checks = tarballs.flatMap((tarball) => [
      { tarball, tool: "publint", args: ["run", tarball, "--strict"] },
      // ESM-only: the packages have no CommonJS build, so node10 and require() resolutions are not theirs.
      { tarball, tool: "attw", args: [tarball, "--profile", "esm-only", "--format", "ascii"] },
    ]);
    const complaints = await Promise.all(
      checks.map(async ({ tarball, tool, args }) => {
        try {
          await run(bin(tool), args, { timeout: 60_000 });
          return undefined;
        } catch (err) {
          const e = err as { stdout?: string; stderr?: string };
          return `${tool} ${basename(tarball)}:\n${e.stdout ?? ""}${e.stderr ?? ""}`;
        }
      }),
    );
    assert.deepEqual(complaints.filter(Boolean), []);
  });

  test("every program runs through npx from the blank project, with --version and -h", async () => {
    for (const { manifest } of publicPrograms) {
      const version = await npx(project, [manifest.name, "--version"]);
      assert.equal(version.code, 0, `${manifest.name} --version:\n${version.out}`);
      assert.ok(version.out.includes(manifest.version), `${manifest.name} --version:\n${version.out}`);
      const help = await npx(project, [manifest.name, "-h"]);
      assert.equal(help.code, 0, `${manifest.name} -h:\n${help.out}`);
      assert.match(help.out, /^usage/im, `${manifest.name} -h:\n${help.out}`);
    }
  });

  test("`npx @switchyard/cluster-dns -conf Corefile` serves DNS", async () => {
    const port = await freeUdpPort();
    writeFileSync(join(project, "Corefile"), `.:${port} {\n    whoami\n}\n`);
    const server = spawn("npx", ["--no-install", "@switchyard/cluster-dns", "-conf", "Corefile"], {
      cwd: project,
      detached: true, // its own process group: npx runs the program in a child, and both must stop
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    server.stdout.on("data", (d) => (output += d));
    server.stderr.on("data", (d) => (output += d));
    try {
      const reply = await askUdp(port, dnsQuery(0x5359, "example.org"), 20);
      assert.equal(reply.readUInt16BE(0), 0x5359, "the reply answers another query");
      assert.ok(reply[2] !== undefined && reply[2] & 0x80, "not a response");
      assert.equal((reply[3] ?? 0xff) & 0x0f, 0, `rcode is not NOERROR\n${output}`);
      assert.match(output, new RegExp(`^\\.:${port}$`, "m"));
    } finally {
      if (server.pid) process.kill(-server.pid, "SIGTERM");
      if (server.exitCode === null) await once(server, "exit");
    }
  });
}

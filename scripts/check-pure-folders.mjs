#!/usr/bin/env node
// Fails when a folder that must stay pure (the proxier's renderers: Services and endpoints in, rules out) reaches
// anything that does I/O at run time: a Node module such as node:child_process, node:fs or node:net, the appliers
// (src/apply/), or a package not known to be pure. Imports are followed through the package's own files, so a
// helper that execs counts against every renderer that imports it. Type-only imports (`import type`, `export
// type`) vanish when compiled and are not followed; `import { type X }` stays (verbatimModuleSyntax keeps it).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The folders held pure, relative to the repository root. */
export const PURE_FOLDERS = [
  "packages/proxier/src/iptables",
  "packages/proxier/src/nftables",
  "packages/proxier/src/ipvs",
  // Held pure here so that the renderers may import it (PURE_PACKAGES).
  "packages/basics/src",
];

/** Node's modules that reach the outside world: processes, files, sockets, the terminal, other threads. */
const IO_BUILTINS = new Set([
  "child_process",
  "cluster",
  "dgram",
  "dns",
  "dns/promises",
  "fs",
  "fs/promises",
  "http",
  "http2",
  "https",
  "inspector",
  "net",
  "os",
  "process",
  "readline",
  "repl",
  "tls",
  "tty",
  "worker_threads",
]);

/** Folders of a package's source whose modules are the I/O shell, whatever they import. */
const IO_FOLDERS = ["apply"];

/** Packages a pure folder may import: declarations only, or a package whose whole source is a pure folder above. */
const PURE_PACKAGES = new Set(["kubernetes-types", "@switchyard/basics"]);

const STATEMENT =
  /^\s*(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;

/** The specifiers a module imports at run time. */
export function runtimeImports(text) {
  const found = [];
  for (const m of text.matchAll(STATEMENT)) {
    if (m[1]) continue;
    found.push(m[2] ?? m[3]);
  }
  return found;
}

/** Why one specifier is I/O, or undefined when it is not: a Node module, an I/O folder, an unknown package. */
function ioReason(specifier, file, srcRoot) {
  if (specifier.startsWith(".")) {
    const rel = relative(srcRoot, resolve(dirname(file), specifier));
    return IO_FOLDERS.some((f) => rel === f || rel.startsWith(`${f}/`)) ? "an applier" : undefined;
  }
  const builtin = specifier.startsWith("node:") ? specifier.slice(5) : specifier;
  if (IO_BUILTINS.has(builtin)) return "a Node module that does I/O";
  if (specifier.startsWith("node:")) return undefined;
  const name = specifier.startsWith("@")
    ? specifier.split("/").slice(0, 2).join("/")
    : specifier.split("/")[0];
  return PURE_PACKAGES.has(name) ? undefined : "a package not known to be pure";
}

/** The .ts source of a relative specifier (`./x.js` is `./x.ts`), or undefined outside the tree. */
function sourceOf(specifier, file) {
  const path = resolve(dirname(file), specifier).replace(/\.js$/, ".ts");
  return existsSync(path) ? path : undefined;
}

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * Every way the pure folders reach I/O: one line each, the chain of imports from a file of the folder to the
 * specifier, e.g. `packages/proxier/src/iptables/x.ts -> ../util/run.js -> node:child_process (a Node module
 * that does I/O)`. `srcOf(folder)` is the package's src/, where relative imports are followed.
 */
export function findImpurities(root, folders = PURE_FOLDERS) {
  const lines = [];
  for (const folder of folders) {
    const dir = join(root, folder);
    const srcRoot = dir.slice(0, dir.lastIndexOf(`${join("/", "src")}`) + 4);
    for (const start of tsFiles(dir)) {
      const seen = new Set([start]);
      const walk = (file, chain) => {
        for (const specifier of runtimeImports(readFileSync(file, "utf8"))) {
          const why = ioReason(specifier, file, srcRoot);
          if (why) {
            lines.push(`${[relative(root, start), ...chain, specifier].join(" -> ")} (${why})`);
            continue;
          }
          if (!specifier.startsWith(".")) continue;
          const next = sourceOf(specifier, file);
          if (!next || seen.has(next)) continue;
          seen.add(next);
          walk(next, [...chain, relative(dirname(start), next)]);
        }
      };
      walk(start, []);
    }
  }
  return lines;
}

if (import.meta.main) {
  const root = join(import.meta.dirname, "..");
  const lines = findImpurities(root);
  if (lines.length > 0) {
    for (const line of lines) console.error(`pure folders: ${line}`);
    console.error(
      `pure folders: ${lines.length} import(s) of I/O; a renderer folder may import nothing that does I/O`,
    );
    process.exit(1);
  }
  console.log(`pure folders: ${PURE_FOLDERS.length} folders, no I/O imported`);
}

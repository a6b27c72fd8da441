#!/usr/bin/env node
// Fails when a folder that must stay pure (the proxier's renderers: Services and endpoints in, rules out) reaches
// anything that does I/O at run time: a Node module such as node:child_process, node:fs or node:net, the appliers
// (src/apply/), or a package not known to be pure. Imports are followed through the package's own files, so a
// helper that execs counts against every renderer that imports it. Type-only imports (`import type`, `export
// type`) vanish when compiled and are not followed; `import { type X }` stays (verbatimModuleSyntax keeps it).
//
// It also holds the resolver's plugin boundaries, CoreDNS's rule: a plugin imports no other plugin (what two of
// them need lives in the plugin kit, src/plugin/pkg/), and nothing else in src/ imports a plugin but the files
// that assemble them. Type-only imports count here: they tie one plugin to another's code all the same.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { readImports } from "./check-package-graph.mjs";

/** The folders held pure, relative to the repository root. */
export const PURE_FOLDERS = [
  "packages/proxier/src/iptables",
  "packages/proxier/src/nftables",
  "packages/proxier/src/ebpf",
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

/** The resolver's plugins: where they live, and the only files outside them that may import one. */
export const PLUGIN_BOUNDARIES = {
  src: "packages/resolver/src",
  plugins: "plugins",
  assembly: ["registry.ts", "index.ts"],
};

/**
 * Crossings let through while a change that removes them is under way. Each must still be found; one that is
 * gone fails the check until it is taken off this list. None today: the last ones (Go's IP parsing in
 * hosts/go-ip.ts, the framework's cidr.ts and go-duration.ts) went when @switchyard/basics took their place.
 */
export const PENDING_CROSSINGS = [];

/**
 * Every import that crosses a plugin boundary, one line each: `<file> -> <specifier> (why)`, e.g.
 * `packages/resolver/src/plugins/acl/acl.ts -> ../template/handler.js (a plugin imports another plugin; what
 * both need goes in src/plugin/pkg/)`. A crossing in `pending` is let through; a pending one no longer
 * found is a line too, so the list cannot outlive what it excuses.
 */
export function findPluginCrossings(root, rules = PLUGIN_BOUNDARIES, pending = PENDING_CROSSINGS) {
  const src = join(root, rules.src);
  const plugins = join(src, rules.plugins);
  /** The plugin a path belongs to (its folder under plugins/, or a loose file there), or undefined. */
  const pluginOf = (path) => {
    const rel = relative(plugins, path);
    return rel.startsWith("..") ? undefined : rel.split("/")[0];
  };
  const lines = [];
  const seen = new Set();
  for (const file of tsFiles(src)) {
    const own = pluginOf(file);
    const assembly = own === undefined && rules.assembly.includes(relative(src, file));
    for (const { specifier } of readImports(readFileSync(file, "utf8"), file)) {
      if (!specifier.startsWith(".")) continue;
      const target = pluginOf(resolve(dirname(file), specifier));
      if (target === undefined || target === own || assembly) continue;
      const line = `${relative(root, file)} -> ${specifier}`;
      if (pending.includes(line)) {
        seen.add(line);
        continue;
      }
      const why =
        own === undefined
          ? `a plugin may be imported only by ${rules.assembly.join(" and ")}`
          : `a plugin imports another plugin; what both need goes in src/plugin/pkg/`;
      lines.push(`${line} (${why})`);
    }
  }
  for (const line of pending)
    if (!seen.has(line))
      lines.push(
        `${line} (no longer imported: take it off PENDING_CROSSINGS in scripts/check-pure-folders.mjs)`,
      );
  return lines;
}

if (import.meta.main) {
  const root = join(import.meta.dirname, "..");
  let failed = false;
  const lines = findImpurities(root);
  if (lines.length > 0) {
    for (const line of lines) console.error(`pure folders: ${line}`);
    console.error(
      `pure folders: ${lines.length} import(s) of I/O; a renderer folder may import nothing that does I/O`,
    );
    failed = true;
  } else console.log(`pure folders: ${PURE_FOLDERS.length} folders, no I/O imported`);
  const crossings = findPluginCrossings(root);
  if (crossings.length > 0) {
    for (const line of crossings) console.error(`plugin boundaries: ${line}`);
    console.error(`plugin boundaries: ${crossings.length} crossing(s) in ${PLUGIN_BOUNDARIES.src}`);
    failed = true;
  } else
    console.log(
      `plugin boundaries: no plugin imports another, and only ${PLUGIN_BOUNDARIES.assembly.join(" and ")} import plugins`,
    );
  if (failed) process.exit(1);
}

#!/usr/bin/env node
// What `npm pack` and `npm publish` run in each public package first (its "prepack" script), in that package's
// folder:
// - copies the repository's LICENSE in, so every tarball ships it while git holds one copy;
// - removes compiled files in dist/ whose source in src/ is gone. tsc never deletes an output, and turbo's cache
//   restores dist/ as it was when stored, so a file moved or deleted in src/ would otherwise still ship, with a
//   source map naming a source that exists nowhere. Only what tsc emits is touched (.js, .d.ts and their maps).
import { copyFileSync, existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const EMITTED = /\.(?:js|d\.ts)(?:\.map)?$/;
const SOURCES = [".ts", ".tsx", ".mts"];

/** The files under `dir`, recursively. */
function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** The outputs under `dist` that no file under `src` compiles to (the build's rootDir "src", outDir "dist"). */
export function staleOutputs(dist, src) {
  if (!existsSync(dist)) return [];
  return [...walk(dist)].filter((file) => {
    if (!EMITTED.test(file)) return false;
    const stem = relative(dist, file).replace(EMITTED, "");
    return !SOURCES.some((ext) => existsSync(join(src, stem + ext)));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const pkg = process.cwd();
  copyFileSync(join(import.meta.dirname, "..", "LICENSE"), join(pkg, "LICENSE"));
  const stale = staleOutputs(join(pkg, "dist"), join(pkg, "src"));
  for (const file of stale) rmSync(file);
  if (stale.length > 0)
    console.error(`prepack: removed ${stale.length} stale files from dist/ (no source in src/)`);
}

// The lab's layering (README, "Where things are") held against its imports: a folder of src/ imports only folders of
// a lower layer, besides the two named edges between commands; only the registry imports a scenario's folder; only
// agent/host/ imports the netns runtime; the agent's echo and loadgen (lab/Dockerfile compiles them alone) import
// nothing outside src/agent; and no two files of src/ import each other, directly or round a circle.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { readImports } from "../scripts/check-package-graph.mjs";

const src = join(import.meta.dirname, "..", "lab", "src");

/** Layers, top first. A folder (or a top-level file, without .ts) imports only what a later line holds. */
const layers: readonly (readonly string[])[] = [
  // The package's entries.
  ["index", "testing"],
  ["cli"],
  // The commands; "scenarios" is the registry (scenarios/index.ts), the one importer of the scenarios' folders.
  ["dashboard", "explain", "trace", "migrate", "conformance", "doctor", "scenarios"],
  ["scenarios/<scenario>"],
  ["scenarios/kit"],
  ["kind"],
  ["agent"],
  ["netns"],
  ["stack"],
  // Under every layer (and under them all, @switchyard/testbed).
  ["exec", "self", "lock", "timing"],
];

/**
 * The two edges between commands: trace follows a change with explain's rule reading, and the dashboard shows the
 * progress file migrate writes.
 */
const sideways = new Set(["trace -> explain", "dashboard -> migrate"]);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The lab files a file imports (type-only imports too: they are what a reader follows). */
function imports(file: string): string[] {
  const out: string[] = [];
  for (const { specifier } of readImports(readFileSync(file, "utf8"), file)) {
    if (!specifier.startsWith(".")) continue;
    const base = resolve(dirname(file), specifier).replace(/\.js$/, "");
    const target = [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p));
    if (target) out.push(target);
  }
  return out;
}

/** The unit a file belongs to: its top folder, a top-level file's name, scenarios' kit or one scenario's folder. */
function unitOf(file: string): string {
  const parts = relative(src, file).split(sep);
  if (parts.length === 1) return (parts[0] ?? "").replace(/\.tsx?$/, "");
  if (parts[0] === "scenarios" && parts.length > 2) return `scenarios/${parts[1]}`;
  return parts[0] ?? "";
}

function layerOf(unit: string): number {
  const key = unit.startsWith("scenarios/") && unit !== "scenarios/kit" ? "scenarios/<scenario>" : unit;
  const i = layers.findIndex((l) => l.includes(key));
  assert.notEqual(
    i,
    -1,
    `src/${unit} is in no layer of test/lab-layers.test.ts (and README, "Where things are")`,
  );
  return i;
}

const files = tsFiles(src);
const edges = files.flatMap((from) => imports(from).map((to) => ({ from, to })));

test("every folder imports only lower layers, and only the registry a scenario's folder", () => {
  const wrong = new Set<string>();
  for (const { from, to } of edges) {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a === b || sideways.has(`${a} -> ${b}`)) continue;
    const intoScenario = b.startsWith("scenarios/") && b !== "scenarios/kit";
    if (intoScenario && a !== "scenarios") wrong.add(`${relative(src, from)} -> ${relative(src, to)}`);
    const [la, lb] = [layerOf(a), layerOf(b)];
    if (la < lb) continue;
    wrong.add(`${relative(src, from)} -> ${relative(src, to)}`);
  }
  assert.deepEqual([...wrong], []);
});

test("only agent/host/ imports the netns runtime", () => {
  const agent = (f: string) => relative(src, f).startsWith(`agent${sep}`);
  const host = (f: string) => relative(src, f).startsWith(join("agent", "host") + sep);
  const wrong = edges
    .filter(({ from, to }) => agent(from) && !host(from) && unitOf(to) === "netns")
    .map(({ from, to }) => `${relative(src, from)} -> ${relative(src, to)}`);
  assert.deepEqual(wrong, []);
});

test("the agent's echo and loadgen import nothing outside src/agent (lab/Dockerfile compiles them alone)", () => {
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of imports(file)) walk(next);
  };
  for (const entry of ["echo.ts", "loadgen.ts"]) walk(join(src, "agent", entry));
  const outside = [...seen].filter((f) => unitOf(f) !== "agent").map((f) => relative(src, f));
  assert.deepEqual(outside, []);
});

test("no circle of imports among the files of src/", () => {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      circles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(" -> "));
      return;
    }
    state.set(file, "open");
    for (const to of next.get(file) ?? []) visit(to, [...path, file]);
    state.set(file, "done");
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(circles, []);
});

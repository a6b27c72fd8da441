#!/usr/bin/env node
// Fails when the workspace packages depend on each other in a cycle. npm installs a cycle without complaint,
// but turbo then cannot order the builds, and a package that reaches itself cannot be built from a clean tree.
// Every kind of dependency counts: a devDependency cycle breaks the build just as well.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SCOPE = "@switchyard/";
const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "peerDependencies"];

/** The directories the root package.json's "workspaces" globs name: each child of "dir/*", or "dir" itself. */
function workspaceDirs(root) {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return workspaces.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [join(root, pattern)];
    const parent = join(root, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name));
  });
}

/** Each workspace package's name mapped to the workspace packages it depends on, in any dependency field. */
export function readPackageGraph(root) {
  const manifests = workspaceDirs(root)
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")));
  const names = new Set(manifests.map((manifest) => manifest.name));
  const graph = new Map();
  for (const manifest of manifests) {
    const deps = DEPENDENCY_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {}));
    graph.set(
      manifest.name,
      [...new Set(deps.filter((dep) => dep.startsWith(SCOPE) && names.has(dep)))].sort(),
    );
  }
  return graph;
}

/** The first cycle found, as the path that closes it ([a, b, a]); undefined when the graph has none. */
export function findCycle(graph) {
  const done = new Set();
  const path = [];
  const visit = (name) => {
    const start = path.indexOf(name);
    if (start !== -1) return [...path.slice(start), name];
    if (done.has(name)) return undefined;
    path.push(name);
    for (const dep of graph.get(name) ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    path.pop();
    done.add(name);
    return undefined;
  };
  for (const name of [...graph.keys()].sort()) {
    const cycle = visit(name);
    if (cycle) return cycle;
  }
  return undefined;
}

if (import.meta.main) {
  const graph = readPackageGraph(join(import.meta.dirname, ".."));
  const cycle = findCycle(graph);
  if (cycle) {
    console.error(`package graph: cycle ${cycle.join(" -> ")}`);
    process.exit(1);
  }
  console.log(`package graph: ${graph.size} packages, no cycle`);
}

#!/usr/bin/env node
// The package graph as the manifests and the imports draw it. Reads every import in the workspaces and in the
// root's bench/, test/ and scripts/, and fails, one line per import naming the file, the import and the fix, when:
// - a workspace package (`@switchyard/x`, `@switchyard/x/sub`) is imported but not declared in the importing
//   workspace's package.json: production code (src/ and bin/, what the package ships) needs it in `dependencies`
//   (or `peerDependencies`), the rest (tests, fixtures, benches, tools) in any dependency field. Type-only
//   imports count as production: they end up in the shipped .d.ts files.
// - the subpath is not one the package's `exports` names: no deep import into its dist/ or src/.
// - a relative import leaves the workspace it is written in, or reaches from the root's folders into a workspace.
// - production code imports a `testing` entry. A package's testing entry (its src/testing/ or src/testing.ts)
//   ships for other packages' tests: it is declared like production code but may import what tests may.
// - an import closes a cycle among the workspaces that the manifests do not show (a test importing a package
//   that depends back on its own), and once for a cycle in the manifests' dependency fields, as before: npm
//   installs a cycle without complaint, but turbo then cannot order the builds, and a package that reaches itself
//   cannot be built from a clean tree. Every dependency field and every import counts, tests included.
//
// The root's bench/, test/ and scripts/ may import any workspace by name without declaring it: npm links every
// workspace into the root's node_modules, the root is private and nothing depends on it (so it closes no cycle),
// and its tests run after the whole build. They may not import one by path, like everyone else.
//
// Imports are read with TypeScript's parser, so a comment or a string naming a package is not an import.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const SCOPE = "@switchyard/";
const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "peerDependencies"];
/** The fields that are installed with a package: what its shipped code may import. */
const PRODUCTION_FIELDS = ["dependencies", "peerDependencies"];
/** The root package's own folders of code. */
const ROOT_FOLDERS = ["bench", "test", "scripts"];

const SOURCE_FILE = /\.(?:ts|tsx|mts|mjs|js)$/;
const TEST_FILE = /\.test\.(?:ts|tsx|mts|mjs|js)$/;
const SKIPPED_FOLDERS = new Set(["node_modules", "dist"]);

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

/** The workspace packages: name, folder relative to the root, manifest. */
function readWorkspaces(root) {
  return workspaceDirs(root)
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({
      dir: relative(root, dir).split(sep).join("/"),
      manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")),
    }))
    .map((ws) => ({ ...ws, name: ws.manifest.name }));
}

/** Each workspace package's name mapped to the workspace packages it depends on, in any dependency field. */
export function readPackageGraph(root) {
  const workspaces = readWorkspaces(root);
  const names = new Set(workspaces.map((ws) => ws.name));
  const graph = new Map();
  for (const { name, manifest } of workspaces) {
    const deps = DEPENDENCY_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {}));
    graph.set(name, [...new Set(deps.filter((dep) => dep.startsWith(SCOPE) && names.has(dep)))].sort());
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

/**
 * The modules a file imports, with the line of each: `import ... from`, `export ... from`, `import type`, a
 * side-effect `import "x"`, `import x = require("x")`, and `import("x")` (a call or a type) with a literal.
 */
export function readImports(text, fileName = "module.ts") {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found = [];
  const add = (literal) =>
    found.push({
      specifier: literal.text,
      line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1,
    });
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      if (ts.isStringLiteral(node.moduleReference.expression)) add(node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) add(argument);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      if (ts.isStringLiteral(node.argument.literal)) add(node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source files under dir, skipping node_modules, dist, hidden folders and Go modules (lab/upstream's). */
function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIPPED_FOLDERS.has(entry.name) || entry.name.startsWith(".")) return [];
      return existsSync(join(path, "go.mod")) ? [] : sourceFiles(path);
    }
    return entry.isFile() && SOURCE_FILE.test(entry.name) ? [path] : [];
  });
}

/**
 * What a file of a workspace is, from its path inside it: "production" (src/, bin/: shipped), "testing" (src/testing/
 * or src/testing.ts: the testing entry, shipped for other packages' tests) or "dev" (tests, fixtures, benches, tools).
 */
function roleOf(pathInPackage) {
  const parts = pathInPackage.split("/");
  if (parts[0] !== "src" && parts[0] !== "bin") return "dev";
  if (TEST_FILE.test(pathInPackage) || parts.some((p) => p === "test" || p === "fixtures")) return "dev";
  if (parts[0] === "src" && (parts[1] === "testing" || /^testing\.[mc]?[jt]sx?$/.test(parts[1]))) {
    return "testing";
  }
  return "production";
}

/** The subpaths a manifest's `exports` names ("." for the package itself); `main` alone names ".". */
function exportedSubpaths(manifest) {
  const { exports } = manifest;
  if (exports === undefined) return manifest.main ? ["."] : [];
  if (typeof exports === "string" || Array.isArray(exports)) return ["."];
  const keys = Object.keys(exports);
  return keys.some((key) => key.startsWith(".")) ? keys : ["."];
}

function exportsSubpath(subpaths, subpath) {
  return subpaths.some((key) => {
    const star = key.indexOf("*");
    if (star === -1) return key === subpath;
    const [before, after] = [key.slice(0, star), key.slice(star + 1)];
    return subpath.startsWith(before) && subpath.endsWith(after) && subpath.length > key.length - 1;
  });
}

const isTestingEntry = (subpath) => subpath === "./testing" || subpath.startsWith("./testing/");
const short = (name) => (name.startsWith(SCOPE) ? name.slice(SCOPE.length) : name);

/** The workspaces of the repository at root, and the package any path of it belongs to. */
function readRepository(root) {
  const workspaces = readWorkspaces(root);
  const rootPackage = { name: "the root package", dir: "", manifest: {}, root: true };
  return {
    root,
    workspaces,
    byName: new Map(workspaces.map((ws) => [ws.name, ws])),
    /** The package a path (relative to the root) belongs to: the workspace holding it, else the root. */
    ownerOf: (path) =>
      workspaces.find((ws) => path === ws.dir || path.startsWith(`${ws.dir}/`)) ?? rootPackage,
  };
}

/**
 * What is wrong with a relative import of a file (at, of package `from` in `role`): a list of findings, each a
 * message and, for one that reaches another package, the edge it adds (`target`), checked for cycles later.
 */
function checkRelative(repo, at, from, role) {
  const resolved = relative(repo.root, resolve(dirname(join(repo.root, at.file)), at.specifier))
    .split(sep)
    .join("/");
  if (resolved.startsWith("../")) return [{ message: ", outside the repository: import a package by name" }];
  const target = repo.ownerOf(resolved);
  if (target !== from) {
    const message = target.root
      ? ", a path into the root package's files: move what it needs into this workspace or a package it may import"
      : `, a path into ${target.name}'s files (${target.dir}/): import it by name, through an entry ${target.name}'s exports name`;
    return [{ message, target }];
  }
  if (role === "production" && roleOf(resolved.slice(from.dir.length + 1)) === "testing") {
    return [
      { message: ", the testing entry, from production code: move what production needs out of src/testing" },
    ];
  }
  return [];
}

/** What is wrong with an import of a workspace package by name (`target`), as checkRelative's findings. */
function checkByName(at, from, role, target) {
  const name = target.name;
  const subpath = at.specifier === name ? "." : `.${at.specifier.slice(name.length)}`;
  const findings = [];
  const subpaths = exportedSubpaths(target.manifest);
  if (!exportsSubpath(subpaths, subpath)) {
    const named = subpaths.length
      ? `it exports ${subpaths.filter((s) => s !== "./package.json").join(", ")}`
      : "it exports nothing";
    findings.push({
      message: `, a subpath ${target.dir}/package.json's exports do not name (${named}): import an entry it exports, or export what is needed`,
    });
  }
  if (role === "production" && isTestingEntry(subpath)) {
    findings.push({
      message: `, a testing entry, from production code: test doubles stay in tests; import ${name}'s production entry, or give ${short(name)} one for what is needed`,
    });
  }
  if (target === from || role === "root") return findings;
  const fields = role === "dev" ? DEPENDENCY_FIELDS : PRODUCTION_FIELDS;
  if (fields.some((field) => from.manifest[field]?.[name] !== undefined)) return findings;
  const declaredIn = DEPENDENCY_FIELDS.find((field) => from.manifest[field]?.[name] !== undefined);
  if (declaredIn) {
    findings.push({
      message: `, which ${from.dir}/package.json has only in ${declaredIn} while ${role} code runs with dependencies: move it to dependencies`,
    });
  } else {
    const field = role === "dev" ? "devDependencies" : "dependencies";
    findings.push({
      message: `, which ${from.dir}/package.json does not declare: add it to ${field}`,
      target,
    });
  }
  return findings;
}

/**
 * Reads every import of the repository at root and returns how many files and imports it read and the
 * violations, one per import and rule ({file, line, specifier, message}), sorted by file and line.
 */
export function checkPackageGraph(root) {
  const repo = readRepository(root);
  const manifestGraph = readPackageGraph(root);
  const files = [
    ...repo.workspaces.flatMap((ws) => sourceFiles(join(root, ws.dir))),
    ...ROOT_FOLDERS.flatMap((folder) => sourceFiles(join(root, folder))),
  ];
  const findings = [];
  let imports = 0;
  for (const path of files) {
    const file = relative(root, path).split(sep).join("/");
    const from = repo.ownerOf(file);
    const role = from.root ? "root" : roleOf(file.slice(from.dir.length + 1));
    for (const { specifier, line } of readImports(readFileSync(path, "utf8"), path)) {
      imports++;
      const at = { file, line, specifier };
      const name = specifier.startsWith("@")
        ? specifier.split("/").slice(0, 2).join("/")
        : specifier.split("/")[0];
      const found =
        specifier.startsWith("./") || specifier.startsWith("../")
          ? checkRelative(repo, at, from, role)
          : repo.byName.has(name)
            ? checkByName(at, from, role, repo.byName.get(name))
            : [];
      for (const finding of found) findings.push({ ...finding, at, from });
    }
  }

  // Every import that reaches another workspace without a manifest's word is an edge too; one that some path
  // leads back from closes a cycle, and that, not the missing declaration, is what to fix.
  const graph = new Map([...manifestGraph].map(([name, deps]) => [name, new Set(deps)]));
  for (const { from, target } of findings) {
    if (target && !from.root && !target.root) graph.get(from.name).add(target.name);
  }
  const violations = findings.map(({ at, from, target, message }) => {
    const back =
      target && !from.root && !target.root ? pathBetween(graph, target.name, from.name) : undefined;
    const why = back
      ? `, but ${back.map(short).join(" -> ")} already: a cycle; move what it needs to a package below both (${edgesOf(back, manifestGraph)})`
      : message;
    return { ...at, message: `${at.file}:${at.line} imports ${at.specifier}${why}` };
  });

  const cycle = findCycle(manifestGraph);
  if (cycle) {
    const { dir } = repo.byName.get(cycle[0]);
    violations.push({
      file: `${dir}/package.json`,
      line: 1,
      specifier: cycle[1],
      message: `${dir}/package.json: the dependency fields make a cycle ${cycle.map(short).join(" -> ")}: drop one edge`,
    });
  }
  violations.sort(
    (a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.message.localeCompare(b.message),
  );
  return { files: files.length, imports, violations };
}

/** The shortest path of package names from one to another in the graph, or undefined when there is none. */
function pathBetween(graph, start, end) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const name = queue.shift();
    if (name === end) {
      const path = [];
      for (let at = end; at !== undefined; at = previous.get(at)) path.unshift(at);
      return path;
    }
    for (const next of [...(graph.get(name) ?? [])].sort()) {
      if (!previous.has(next)) {
        previous.set(next, name);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/** Which of a path's edges the manifests declare and which only an import makes. */
function edgesOf(path, manifestGraph) {
  return path
    .slice(1)
    .map((to, i) => {
      const from = path[i];
      const how = manifestGraph.get(from)?.includes(to) ? "a dependency field" : "an import";
      return `${short(from)} -> ${short(to)}: ${how}`;
    })
    .join("; ");
}

if (import.meta.main) {
  const root = join(import.meta.dirname, "..");
  const { files, imports, violations } = checkPackageGraph(root);
  for (const { message } of violations) console.error(`package graph: ${message}`);
  const summary = `${readPackageGraph(root).size} packages, ${files} files, ${imports} imports read, ${violations.length} violations`;
  if (violations.length) {
    console.error(`package graph: ${summary}`);
    process.exit(1);
  }
  console.log(`package graph: ${summary}`);
}

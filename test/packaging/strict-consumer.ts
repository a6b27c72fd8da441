// A consumer as strict as a TypeScript user's can be: NodeNext, strict, and skipLibCheck off, so every .d.ts the
// public packages ship (and every declaration they import from their dependencies) is checked, not only the
// consumer's own file. It runs in the packaging test's project, where the tarballs are installed as a registry user
// installs them: without @kubernetes/client-node, an optional peer of @switchyard/kube whose declarations need
// @types/ws, which nobody installs. A public type that named it failed here ("Could not find a declaration file
// for module 'ws'").
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The optional dependencies the consumer's install must not hold, so that the check means something. */
export const ABSENT_OPTIONAL_PACKAGES = ["@kubernetes/client-node"];

interface Manifest {
  name: string;
  exports: Record<string, unknown>;
}

/** Every entry point a user can import: each package's `exports` keys but ./package.json, as specifiers. */
export function entryPoints(manifests: readonly Manifest[]): string[] {
  return manifests.flatMap((m) =>
    Object.keys(m.exports)
      .filter((key) => key !== "./package.json")
      .map((key) => (key === "." ? m.name : `${m.name}/${key.slice(2)}`)),
  );
}

/** A module importing every entry point, so each one's declarations are part of the program. */
export function consumerSource(specifiers: readonly string[]): string {
  const lines = specifiers.map((s, i) => `import * as e${i} from "${s}";`);
  const names = specifiers.map((_, i) => `e${i}`).join(", ");
  return `${lines.join("\n")}\nexport const entries: object[] = [${names}];\n`;
}

/**
 * What a Node 24 project starts from (@tsconfig/node24's module, target and lib: no DOM, which also keeps the check
 * a few seconds shorter), strict, with every declaration file checked.
 */
export const strictCompilerOptions = {
  module: "NodeNext",
  moduleResolution: "NodeNext",
  target: "ES2024",
  lib: ["ES2024"],
  strict: true,
  noEmit: true,
  types: ["node"],
  skipLibCheck: false,
};

/**
 * Writes strict-consumer.ts and tsconfig.strict.json into `project` (the tarballs and @types/node installed) and
 * typechecks them with `tsc`. Throws with tsc's output when they do not check, and before that when one of
 * ABSENT_OPTIONAL_PACKAGES is installed after all.
 */
export async function typecheckStrictConsumer(
  project: string,
  manifests: readonly Manifest[],
  tsc: string,
): Promise<void> {
  for (const name of ABSENT_OPTIONAL_PACKAGES) {
    if (existsSync(join(project, "node_modules", name)))
      throw new Error(`${name} is installed in ${project}: an optional dependency became a required one`);
  }
  writeFileSync(join(project, "strict-consumer.ts"), consumerSource(entryPoints(manifests)));
  writeFileSync(
    join(project, "tsconfig.strict.json"),
    JSON.stringify({ compilerOptions: strictCompilerOptions, files: ["strict-consumer.ts"] }),
  );
  try {
    await run(process.execPath, [tsc, "-p", "tsconfig.strict.json"], { cwd: project });
  } catch (err) {
    throw new Error(
      `a strict consumer (skipLibCheck: false) does not typecheck:\n${(err as { stdout?: string }).stdout}`,
    );
  }
}

// The harness of upstream-decisions.test.ts: one row's input run through our program or kube-proxy v1.37.2's
// binary with --write-config-to, and the decision read back from the written file.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import yaml from "js-yaml";
import { main } from "../src/main.js";

export const REJECT = "reject";
/** A value read from the written configuration (a dotted path), or a refusal. */
export type Decision = unknown;
/** [input, upstream's decision, our decision when it deliberately differs, with why]. */
export type Row =
  | readonly [string, Decision]
  | readonly [string, Decision, { ours: Decision; deviation: string }];

export interface Table {
  /** What the rows set: a flag (--name=value) or a config field (name: value in a --config file). */
  readonly input: { flag: string } | { field: string };
  /** Where the decision shows in the written configuration. */
  readonly path: string;
  /** Flags given before the row's flag, or lines of the file before the row's field. */
  readonly extra?: readonly string[];
  readonly rows: readonly Row[];
}

const dir = mkdtempSync(join(tmpdir(), "upstream-decisions-"));
export const removeScratch = () => rmSync(dir, { recursive: true, force: true });
let files = 0;

function at(config: Record<string, unknown>, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], config);
}

const written = (file: string, path: string) =>
  at(yaml.load(readFileSync(file, "utf8")) as Record<string, unknown>, path);

export async function oursDecide(argv: readonly string[], path: string): Promise<Decision> {
  const out = join(dir, `ours-${files++}.yaml`);
  const code = await main({
    argv: [...argv, `--write-config-to=${out}`],
    stdout: { write: () => true },
    stderr: { write: () => true },
    stopSignal: new Promise(() => {}),
  });
  return code === 0 ? written(out, path) : REJECT;
}

export async function upstreamDecide(
  binary: string,
  argv: readonly string[],
  path: string,
): Promise<Decision> {
  const out = join(dir, `upstream-${files++}.yaml`);
  try {
    await promisify(execFile)(binary, [...argv, `--write-config-to=${out}`]);
  } catch {
    return REJECT;
  }
  return written(out, path);
}

/** A KubeProxyConfiguration file: the type header, then `lines`, given as --config. */
function configFlag(lines: readonly string[]): string {
  const path = join(dir, `config-${files++}.yaml`);
  writeFileSync(
    path,
    ["apiVersion: kubeproxy.config.k8s.io/v1alpha1", "kind: KubeProxyConfiguration", ...lines, ""].join("\n"),
  );
  return `--config=${path}`;
}

/** The command line of one row. A field "a.b" becomes "a:" with "  b: <raw>" under it. */
export function argvOf(t: Table, raw: string): string[] {
  if ("flag" in t.input) return [...(t.extra ?? []), `--${t.input.flag}=${raw}`];
  const [first, ...rest] = t.input.field.split(".");
  const field = rest.length === 0 ? [`${first}: ${raw}`] : [`${first}:`, `  ${rest.join(".")}: ${raw}`];
  return [configFlag([...(t.extra ?? []), ...field])];
}

export const title = (t: Table) =>
  `${"flag" in t.input ? `--${t.input.flag}` : `${t.input.field} (file)`}${t.extra?.length ? ` with ${t.extra.join(" ")}` : ""}`;

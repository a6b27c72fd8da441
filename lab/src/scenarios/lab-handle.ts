import type { Exec } from "../netns/exec.js";
import type { ScenarioContext } from "./scenario.js";

// The proxy and DNS scenarios' name for the lab handle every scenario opens (scenario-lab.ts).
export { openLab, type ScenarioLab as LabHandle, sleep } from "./scenario-lab.js";

/** A `--set` list parameter: "1000,5000" → ["1000", "5000"]; the default when unset. */
export function listParam(ctx: ScenarioContext, name: string, fallback: readonly string[]): string[] {
  const raw = ctx.params.get(name);
  if (raw === undefined) return [...fallback];
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error(`scenario: --set ${name}=${raw} is an empty list`);
  return items;
}

/** A `--set` string parameter with its default. */
export const stringParam = (ctx: ScenarioContext, name: string, fallback: string): string =>
  ctx.params.get(name) ?? fallback;

/** Runs a command in a namespace; "" when it fails (a probe's failure is data, not an error). */
export const inNetns = (exec: Exec, netns: string, argv: readonly string[]) =>
  exec(["ip", "netns", "exec", netns, ...argv]).catch(() => "");

/** The network namespace of a pod of this lab: `<prefix>-pod-n<node>-<uid8>`, found by its uid. */
export async function podNetns(exec: Exec, prefix: string, uid: string): Promise<string | undefined> {
  const list = await exec(["ip", "netns", "list"]);
  return list
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .find((n) => n.startsWith(`${prefix}-pod-`) && n.endsWith(`-${uid.slice(0, 8)}`));
}

import type { MigrationProgress } from "../migrate/progress-file.js";
import type { MigrationView } from "./view-model.js";

type Counts = { failures: number; attempts: number };
const add = (a: Counts | undefined, b: Counts): Counts => ({
  failures: (a?.failures ?? 0) + b.failures,
  attempts: (a?.attempts ?? 0) + b.attempts,
});

/**
 * A migration as the page shows it, from the progress file `migrate` keeps. `alive` says whether the process
 * that writes it still runs: a file left in "switching" by a process that is gone was interrupted.
 */
export function migrationView(p: MigrationProgress, alive: boolean): MigrationView {
  const finished = p.phase === "done" || p.phase === "failed";
  const nodes = p.nodes.map((n) => {
    let tcp: Counts | undefined;
    let dns: Counts | undefined;
    for (const t of Object.values(n.traffic ?? {})) {
      tcp = add(tcp, t.tcp);
      dns = add(dns, t.dns);
    }
    return {
      name: n.name,
      state: n.state,
      from: n.from ?? "",
      ...(n.switchSeconds !== undefined ? { switchSeconds: n.switchSeconds } : {}),
      ...(n.leftovers !== undefined ? { leftovers: n.leftovers } : {}),
      ...(tcp ? { tcp } : {}),
      ...(dns ? { dns } : {}),
    };
  });
  return {
    to: p.to,
    status: finished ? (p.phase as "done" | "failed") : alive ? "running" : "interrupted",
    phase: p.phase,
    error: p.error ?? "",
    startedAt: Date.parse(p.startedAt),
    updatedAt: Date.parse(p.updatedAt),
    nodes,
    failures: nodes.reduce((n, x) => n + (x.tcp?.failures ?? 0) + (x.dns?.failures ?? 0), 0),
  };
}

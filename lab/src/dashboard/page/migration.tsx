import type { MigrationView } from "../view-model.js";
import { ago, clock } from "./format.js";

const counts = (c: { failures: number; attempts: number } | undefined) =>
  c ? `${c.failures}/${c.attempts}` : "-";

const statusClass = { running: "warn", done: "ok", failed: "bad", interrupted: "bad" } as const;

/** The last `switchyard-lab migrate`: where each node is, and what failed while it switched. */
export function Migration({ migration, now }: { migration: MigrationView; now: number }) {
  return (
    <section id="migration">
      <h2>
        Migration to {migration.to}:{" "}
        <span class={statusClass[migration.status]} data-testid="migration-status">
          {migration.status}
        </span>
      </h2>
      <p class="muted">
        started {clock(migration.startedAt)}, phase {migration.phase}, updated {ago(migration.updatedAt, now)}
        ; failed connections and lookups so far: {migration.failures}
        {migration.error && <span class="bad"> · {migration.error}</span>}
      </p>
      <table>
        <thead>
          <tr>
            <th>node</th>
            <th>state</th>
            <th>from</th>
            <th class="num">switch</th>
            <th class="num">leftover rules</th>
            <th class="num" title="failed/attempted, every client node">
              tcp while switching
            </th>
            <th class="num" title="failed/attempted, every client node">
              dns while switching
            </th>
          </tr>
        </thead>
        <tbody>
          {migration.nodes.map((n) => (
            <tr key={n.name} data-migration-node={n.name}>
              <td>{n.name}</td>
              <td>{n.state}</td>
              <td>{n.from || "-"}</td>
              <td class="num">{n.switchSeconds !== undefined ? `${n.switchSeconds.toFixed(1)}s` : "-"}</td>
              <td class={`num ${n.leftovers ? "bad" : ""}`}>{n.leftovers ?? "-"}</td>
              <td class={`num ${n.tcp?.failures ? "bad" : ""}`}>{counts(n.tcp)}</td>
              <td class={`num ${n.dns?.failures ? "bad" : ""}`}>{counts(n.dns)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

import { proxyView } from "../migrate/measure.js";
import type { NodePlan } from "../netns/plan.js";
import { labEntry } from "../self.js";
import { type ScenarioLab, sleep } from "./scenario-lab.js";

export interface Answers {
  answers: Record<string, number>;
  failures: number;
}

/** Opens `connections` connections from the node's namespace to ip:port and counts which pod answered each. */
export async function answersFrom(
  lab: ScenarioLab,
  node: NodePlan,
  target: string,
  connections: number,
): Promise<Answers> {
  const out = await lab.exec([
    "ip",
    "netns",
    "exec",
    node.netns,
    ...labEntry("scenarios/count-answers"),
    "--target",
    target,
    "--connections",
    String(connections),
  ]);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Answers;
}

/** Every node's proxy sync count, read before a change so that `proxiesCaughtUp` can wait for a later sync. */
export async function syncMark(lab: ScenarioLab): Promise<Map<string, number>> {
  const m = new Map<string, number>();
  for (const n of lab.plan.nodeList) m.set(n.name, (await proxyView(lab.exec, n.netns)).sync.count);
  return m;
}

/**
 * Waits until every node's proxy finished a sync after `mark` (taken before the change, after which the API state
 * was seen to be as wanted), plus a second for a sync that was already running when the change arrived.
 */
export async function proxiesCaughtUp(lab: ScenarioLab, mark: Map<string, number>): Promise<void> {
  await lab.until(
    "every node's proxy to sync the change",
    async () => {
      const behind: string[] = [];
      for (const n of lab.plan.nodeList)
        if ((await proxyView(lab.exec, n.netns)).sync.count <= (mark.get(n.name) ?? 0)) behind.push(n.name);
      return behind.length === 0 ? true : `not yet synced: ${behind.join(", ")}`;
    },
    60_000,
  );
  await sleep(1000);
}

import { realClock, sleep } from "@switchyard/kube";
import { labEntry } from "../../self.js";
import { proxyView } from "../../stack/proxy-measure.js";
import type { LabNode, ScenarioLab } from "../kit/scenario-lab.js";

export interface Answers {
  answers: Record<string, number>;
  failures: number;
}

/**
 * Opens `connections` connections from the node's network namespace to ip:port and counts which pod answered
 * each. A netns lab runs count-answers.ts there with this process's Node (a few connections in flight); a kind node
 * has no Node, so bash opens them one after another (answerLoop).
 */
export async function answersFrom(
  lab: ScenarioLab,
  node: LabNode,
  target: string,
  connections: number,
): Promise<Answers> {
  if (lab.runtime === "kind")
    return countAnswerLines(await lab.exec([...node.run, "bash", "-c", answerLoop(target, connections)]));
  const out = await lab.exec([
    ...node.run,
    ...labEntry("scenarios/hints/count-answers"),
    ...["--target", target, "--connections", String(connections)],
  ]);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Answers;
}

/** One line per connection: the answering pod's name (the echo server's first word), or "-" when none answered. */
export function answerLoop(target: string, connections: number): string {
  const [host, port] = target.split(":");
  if (!/^[0-9.]+$/.test(host ?? "") || !/^\d+$/.test(port ?? "")) throw new Error(`bad target ${target}`);
  return [
    `for i in $(seq ${connections}); do`,
    `  a=$(timeout 2 bash -c 'exec 3<>/dev/tcp/${host}/${port} && head -1 <&3' 2>/dev/null | cut -d' ' -f1)`,
    `  echo "\${a:--}"`,
    "done",
  ].join("\n");
}

/** answerLoop's output as answers per pod and failures. */
export function countAnswerLines(out: string): Answers {
  const answers: Record<string, number> = {};
  let failures = 0;
  for (const line of out.split("\n").map((l) => l.trim())) {
    if (line === "") continue;
    if (line === "-") failures++;
    else answers[line] = (answers[line] ?? 0) + 1;
  }
  return { answers, failures };
}

/** Every node's proxy sync count, read before a change so that `proxiesCaughtUp` can wait for a later sync. */
export async function syncMark(lab: ScenarioLab): Promise<Map<string, number>> {
  const m = new Map<string, number>();
  for (const n of lab.nodes) m.set(n.name, (await proxyView(lab.exec, n.run)).sync.count);
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
      for (const n of lab.nodes)
        if ((await proxyView(lab.exec, n.run)).sync.count <= (mark.get(n.name) ?? 0)) behind.push(n.name);
      return behind.length === 0 ? true : `not yet synced: ${behind.join(", ")}`;
    },
    60_000,
  );
  await sleep(realClock, 1000);
}

import { processStartTicks } from "./container-shim.js";
import { realTeardownDeps, teardown } from "./host/netns.js";
import { PodCgroups } from "./pod-cgroups.js";
import { podNetnsPrefix, type WorkerDeps } from "./pod-worker.js";
import { readContainerRecords, removeSandboxRecord, type SandboxRecord } from "./runtime-record.js";

/** Pod namespaces of this node's earlier agents (by name): those no worker owns now are left over. */
export function leftoverPodNamespaces(netnsList: string, d: Pick<WorkerDeps, "plan" | "node">): string[] {
  const prefix = podNetnsPrefix(d.plan, d.node);
  return netnsList
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((name) => name.startsWith(prefix));
}

/**
 * Removes what a previous agent of this node left and no pod bound here now claims (a pod deleted while no agent
 * ran): its containers' processes (those on the node's network have no namespace of their own to go with), the
 * pod namespaces, the cgroups, the addresses and the records; and any pod namespace without a record.
 */
export async function removeLeftovers(
  records: readonly SandboxRecord[],
  ownedNetns: ReadonlySet<string>,
  d: Pick<WorkerDeps, "plan" | "node" | "ipams" | "exec" | "log">,
): Promise<void> {
  const pids = records.flatMap((r) =>
    readContainerRecords(r.dir).flatMap((c) =>
      c.process && processStartTicks(c.process.pid) === c.process.pidStart ? [c.process.pid] : [],
    ),
  );
  for (const pid of pids) process.kill(pid, "SIGKILL");
  const listed = leftoverPodNamespaces(await d.exec(["ip", "netns", "list"]), d);
  const namespaces = new Set(
    [...records.map((r) => r.netns), ...listed].filter((n) => n !== d.node.netns && !ownedNetns.has(n)),
  );
  if (records.length > 0 || namespaces.size > 0)
    d.log.warn("removing pods of a previous agent run that no pod here claims", {
      pods: records.length,
      namespaces: namespaces.size,
    });
  const torn = await teardown(
    [...namespaces].filter((name) => listed.includes(name)).map((name) => ({ kind: "netns" as const, name })),
    { ...realTeardownDeps, exec: d.exec },
  );
  for (const e of torn.errors) d.log.warn("sandbox teardown", { error: e });
  await gone(pids);
  for (const r of records) {
    if (r.netns !== d.node.netns) for (const ip of r.podIps) for (const ipam of d.ipams) ipam.release(ip);
    if (d.node.cgroup) {
      const node = { unified: d.node.cgroup, ...(d.node.limits ? { limits: d.node.limits } : {}) };
      new PodCgroups(node, r.uid, { memory: {}, cpu: {}, unified: {} }).remove();
    }
    removeSandboxRecord(r.dir);
  }
}

/** Resolves once none of the pids is alive, or after 2 s. */
async function gone(pids: readonly number[]): Promise<void> {
  for (let waited = 0; waited < 2000; waited += 20) {
    if (pids.every((pid) => processStartTicks(pid) === undefined)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

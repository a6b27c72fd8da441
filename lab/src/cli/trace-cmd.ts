import { realExec } from "../exec.js";
import { openLabFor } from "../explain/open-lab.js";
import { parseTo } from "../explain/targets.js";
import { runTrace, type TraceOptions } from "../trace/run.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { positiveIntFlag, UsageError } from "./usage.js";

const defaultChanges = 4;
const defaultWaitSeconds = 60;
const defaultTimeoutSeconds = 300;

/** The Service argument: NAME, NAMESPACE/NAME, with :PORT; an address is refused. */
function serviceArg(name: string): Pick<TraceOptions, "namespace" | "service" | "port"> {
  const to = (() => {
    try {
      return parseTo(name);
    } catch (err) {
      throw new UsageError(`trace: ${(err as Error).message.replace(/^--to /, "")}`);
    }
  })();
  if (to.kind !== "service") throw new UsageError(`trace: ${name} is an address; name the Service`);
  return { namespace: to.namespace, service: to.name, ...(to.port ? { port: to.port } : {}) };
}

/** `switchyard-lab trace`: endpoint changes of one Service, from the pod to every node's rules. */
async function traceService(inv: Invocation): Promise<number> {
  const [name = ""] = inv.positionals;
  const options: TraceOptions = {
    ...serviceArg(name),
    changes: positiveIntFlag("trace", "changes", inv.string("changes")) ?? defaultChanges,
    watch: inv.bool("watch"),
    waitMs: (positiveIntFlag("trace", "wait", inv.string("wait")) ?? defaultWaitSeconds) * 1000,
    timeoutMs: (positiveIntFlag("trace", "timeout", inv.string("timeout")) ?? defaultTimeoutSeconds) * 1000,
  };
  const lab = await openLabFor("trace", labDir(inv.string("state-dir")), realExec, process.stderr);
  try {
    const summary = await runTrace(lab, options, (block) => console.log(`${block}\n`));
    console.log(summary);
    return 0;
  } finally {
    lab.close();
  }
}

export const traceCommand: Command = {
  name: "trace",
  group: "Looking inside",
  summary: "follow a Service's endpoint changes from the pod to every node's rules, with p50/p99 per node",
  description:
    "Follows endpoint changes of a Service from the pod to the rules in every node's kernel, as a timeline per " +
    "change: the pod becoming Ready (or going), the EndpointSlice write that carried it (its resourceVersion and " +
    "endpoints.kubernetes.io/last-change-trigger-time), and when each node's rules started (or stopped) sending " +
    "the ClusterIP to the pod: every node's live ruleset is read over and over and traced, as explain does. Each " +
    "node's proxy's own kubeproxy_network_programming_duration_seconds is shown next to it. Ends with the p50 " +
    "and p99 per node over the changes. A node whose proxy runs in ebpf mode (netns lab) is read through the maps " +
    "its proxy pinned, traced as explain does, so a change landing in them is timed as a change of rules is.\n\n" +
    "By default trace makes the changes itself: it scales the Deployment (or StatefulSet) behind the Service one " +
    "up, then back, until --changes changes are done, and leaves the replicas as it found them. With --watch it " +
    "changes nothing and follows the next --changes changes someone else makes (a rollout, a scale, a failing " +
    "readiness probe).",
  args: [
    {
      name: "SERVICE",
      help: "the Service: NAME (in default) or NAMESPACE/NAME, with :PORT when it has several ports",
    },
  ],
  flags: [
    { name: "changes", value: "N", default: String(defaultChanges), help: "how many changes to follow" },
    { name: "watch", help: "follow changes made by others instead of making them" },
    {
      name: "wait",
      value: "SECONDS",
      default: String(defaultWaitSeconds),
      help: "how long one change may take to reach every node",
    },
    {
      name: "timeout",
      value: "SECONDS",
      default: String(defaultTimeoutSeconds),
      help: "with --watch, how long to wait for the changes",
    },
    labStateDirFlag,
  ],
  examples: [
    "switchyard-lab trace echo",
    "switchyard-lab trace default/echo --changes 10",
    "switchyard-lab trace default/echo --watch   # then, elsewhere: kubectl rollout restart deployment echo",
  ],
  run: traceService,
};

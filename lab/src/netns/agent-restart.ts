import { isOurs, type ProcessRecord, startDetached, stopProcess } from "@switchyard/testbed/controlplane";
import { nodeByName } from "./plan.js";
import { readLabState, writeLabState } from "./state.js";

export interface AgentRestartOptions {
  /** SIGKILL at once, as a crash ends it, instead of SIGTERM (the agent's orderly stop). */
  kill?: boolean;
  /** Detached (the CLI) outlives the caller; tests keep the agent attached. */
  detached?: boolean;
  /** Runs after the agent has stopped and before the new one starts: what happens on a node with no agent. */
  whileStopped?: () => Promise<void>;
}

/**
 * Stops one node's agent and starts it again with the same command and log, as `systemctl restart kubelet` does
 * on a node: the pods go on running meanwhile, and the new agent adopts them. Returns the new agent's record.
 */
export async function restartAgent(
  dir: string,
  nodeName: string,
  o: AgentRestartOptions = {},
): Promise<{ stopped: string; agent: ProcessRecord }> {
  const state = readLabState(dir);
  if (!state) throw new Error(`no lab in ${dir}; run switchyard-lab up`);
  const node = nodeByName(state.plan, nodeName);
  const index = state.agents.findIndex((a) => a.name === `agent-${node.name}`);
  const old = state.agents[index];
  if (!old) throw new Error(`no agent recorded for node ${node.name} in ${dir}`);
  let stopped: string;
  if (o.kill && isOurs(old)) {
    process.kill(old.pid, "SIGKILL");
    while (isOurs(old)) await new Promise((resolve) => setTimeout(resolve, 20));
    stopped = "killed";
  } else stopped = await stopProcess(old, 5000);
  await o.whileStopped?.();
  const agent = startDetached(old.name, old.bin, old.args, old.log, o.detached ?? true);
  state.agents[index] = agent;
  writeLabState(dir, state);
  return { stopped, agent };
}

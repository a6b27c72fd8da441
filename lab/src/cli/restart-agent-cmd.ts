import { withLabLock } from "../lock.js";
import { restartAgent } from "../netns/agent-restart.js";
import { readLabRuntime } from "../netns/state.js";
import type { Command } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";

export const restartAgentCommand: Command = {
  name: "restart-agent",
  group: "Lab",
  summary: "restart a netns node's agent, as restarting a node's kubelet: its pods go on running",
  description:
    "Stops the node agent of one netns node (SIGTERM, or SIGKILL with --kill, as a crash) and starts it again. " +
    "The node's containers run under their shims meanwhile; the new agent adopts them from the records the " +
    "old one kept, and what ended while no agent ran is reported as it ended. On kind, restart a node's " +
    "kubelet with docker exec <node> systemctl restart kubelet.",
  args: [{ name: "NODE", help: "the node's name, as kubectl get nodes lists it" }],
  flags: [labStateDirFlag, { name: "kill", help: "SIGKILL the agent, as a crash would end it" }],
  examples: ["sudo switchyard-lab restart-agent node-1", "sudo switchyard-lab restart-agent node-2 --kill"],
  run(inv) {
    const [node = ""] = inv.positionals;
    const dir = labDir(inv.string("state-dir"));
    if (readLabRuntime(dir) === "kind")
      throw new Error(
        "restart-agent is for netns labs; on kind: docker exec <node> systemctl restart kubelet",
      );
    return withLabLock(dir, "restart-agent", async () => {
      const { stopped, agent } = await restartAgent(dir, node, { kill: inv.bool("kill") });
      console.log(`${agent.name}: ${stopped}, started again as pid ${agent.pid}`);
      return 0;
    });
  },
};

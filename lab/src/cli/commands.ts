import type { Command } from "./command.js";
import { completionCommand } from "./completion-cmd.js";
import { conformanceCommand } from "./conformance-cmd.js";
import { controlplaneCommand } from "./controlplane-cmd.js";
import { dashboardCommand } from "./dashboard-cmd.js";
import { doctorCommand } from "./doctor-cmd.js";
import { explainCommand } from "./explain-cmd.js";
import { helpCommand } from "./help-cmd.js";
import { envCommand, kubectlCommand } from "./kubectl-cmd.js";
import { downCommand, kubeconfigCommand, logsCommand, statusCommand } from "./lab-cmd.js";
import { lbCommand } from "./lb-cmd.js";
import { migrateCommand } from "./migrate-cmd.js";
import { restartAgentCommand } from "./restart-agent-cmd.js";
import { scenarioGroup } from "./scenario-cmd.js";
import { shellCommand } from "./shell-cmd.js";
import { traceCommand } from "./trace-cmd.js";
import { upCommand } from "./up-cmd.js";
import { upstreamCommand } from "./upstream-cmd.js";
import { versionCommand } from "./version-cmd.js";

/**
 * Every command of switchyard-lab, in the order the top-level help lists them (under each one's `group`).
 * Adding a command is one entry here: a Command from its own *-cmd.ts module (command.ts says what it holds),
 * whose flags, arguments and examples then make its help, its usage errors, "did you mean" and shell
 * completion.
 */
const commands: Command[] = [
  upCommand,
  downCommand,
  statusCommand,
  kubeconfigCommand,
  logsCommand,
  restartAgentCommand,
  migrateCommand,
  kubectlCommand,
  envCommand,
  shellCommand(() => commandTable),
  dashboardCommand,
  explainCommand,
  lbCommand,
  traceCommand,
  scenarioGroup,
  conformanceCommand,
  controlplaneCommand,
  upstreamCommand,
  doctorCommand,
  versionCommand,
  completionCommand(() => commandTable),
  helpCommand(() => commandTable),
];

export const commandTable: Command = {
  name: "switchyard-lab",
  summary: "Switchyard's lab",
  description:
    "switchyard-lab: Switchyard's lab. A Kubernetes cluster to learn service networking on: a real control " +
    "plane, nodes as network namespaces (Linux, root) or kind's Docker containers, Switchyard's stack (or " +
    "upstream's), and scenarios that measure what people claim about it.",
  flags: [
    { name: "version", help: "the lab's version and the pinned upstream releases (as the version command)" },
  ],
  subcommands: commands,
};

import { conformanceCommand, conformanceHelp } from "./conformance-cmd.js";
import { controlplaneCommand } from "./controlplane-cmd.js";
import { envCommand, kubectlCommand, shellCommand } from "./kubectl-cmd.js";
import { labCommand, labHelp, migrateCommand, migrateHelp } from "./lab-cmd.js";
import { scenarioCommand, scenarioHelp } from "./scenario-cmd.js";
import { upstreamCommand } from "./upstream-cmd.js";
import { UsageError } from "./usage.js";

const usage = `switchyard-lab: Switchyard's lab

Usage:
  switchyard-lab up [--runtime netns|kind] [--nodes 3] [--zones 2]   a lab cluster: nodes and pods as network
                                                      namespaces (netns, root) or kind's Docker containers (kind)
  switchyard-lab down|status|kubeconfig|logs <component>   (see switchyard-lab up --help)
  switchyard-lab migrate --to nftables|iptables [--node N | --all]   kube-proxy's mode, node by node, under traffic
  switchyard-lab scenario <name> [--set k=v]             a scenario measuring a claim of claims.md
  switchyard-lab conformance [--focus RE] | compare A B   Kubernetes' e2e suite (sig-network) against the kind lab
  switchyard-lab controlplane up|down|status [flags]   a local control plane from upstream binaries
  switchyard-lab upstream build|where|versions [flags]  the upstream binaries, built from source
  switchyard-lab kubectl <args>                         kubectl against the lab (KUBECONFIG set for you)
  switchyard-lab env                                    shell exports: kubectl on PATH, KUBECONFIG
  switchyard-lab shell                                  a shell with those exports

Run a command with --help for its flags.`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "up":
      case "down":
      case "status":
      case "kubeconfig":
      case "logs":
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(labHelp);
          return 0;
        }
        return await labCommand(command, rest);
      case "migrate":
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(migrateHelp);
          return 0;
        }
        return await migrateCommand(rest);
      case "scenario":
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(scenarioHelp);
          return 0;
        }
        return await scenarioCommand(rest);
      case "conformance":
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(conformanceHelp);
          return 0;
        }
        return await conformanceCommand(rest);
      case "controlplane":
        return await controlplaneCommand(rest);
      case "upstream":
        return await upstreamCommand(rest);
      case "kubectl":
        return await kubectlCommand(rest);
      case "env":
        return await envCommand(rest);
      case "shell":
        return await shellCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(usage);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"; run switchyard-lab --help`);
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`switchyard-lab: ${message}`);
    return err instanceof UsageError ? 2 : 1;
  }
}

import { doctorChecks, doctorReport } from "../doctor/checks.js";
import { gatherFacts } from "../doctor/facts.js";
import { machineFacts } from "../kind/probes.js";
import { type LabRuntime, labRuntimes, selectRuntime } from "../kind/select-runtime.js";
import type { Command } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";

export const doctorCommand: Command = {
  name: "doctor",
  group: "Other",
  summary: "check this machine for what the lab needs, and say what to fix",
  description:
    "Checks what a lab needs on this machine, one line each, OK or what is wrong and how to fix it: root, the " +
    "Node running the lab, the upstream binaries and the Go that builds them, the commands the netns runtime " +
    "runs (ip, nft, iptables, conntrack, openssl), the host programs its busybox, agnhost and nginx images run " +
    "(/bin/busybox of busybox-static, dig, nc, nginx: a WARN, since only those pods need them), the br_netfilter module, the ports the control plane listens " +
    "on, the Docker engine, and free disk. A check only the other runtime needs is a WARN. Exits 1 when the " +
    "runtime chosen (--runtime, else the one up would pick) lacks something it needs.",
  flags: [
    {
      name: "runtime",
      value: "RUNTIME",
      choices: labRuntimes,
      default: "the one up would choose here",
      help: "the runtime to check for",
    },
    labStateDirFlag,
  ],
  examples: ["sudo switchyard-lab doctor", "switchyard-lab doctor --runtime kind"],
  async run(inv) {
    let runtime = inv.string("runtime") as LabRuntime | undefined;
    if (runtime === undefined) {
      const chosen = await selectRuntime(machineFacts());
      runtime = "runtime" in chosen ? chosen.runtime : undefined;
      console.log(
        runtime
          ? `runtime ${runtime} (the default here; --runtime chooses)`
          : "no runtime works here yet; every problem below counts",
      );
    } else console.log(`runtime ${runtime}`);
    const checks = doctorChecks(await gatherFacts(runtime, labDir(inv.string("state-dir"))), runtime);
    console.log(doctorReport(checks, runtime));
    return checks.some((c) => c.status === "fail") ? 1 : 0;
  },
};

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { DockerEngine } from "@switchyard/testbed";
import { removeKindNodes } from "../../src/kind/lab-down.js";
import { kindLabUp } from "../../src/kind/lab-up.js";
import { kindToolsOnThisMachine } from "../../src/kind/machine-tools.js";
import { spawnExec } from "../../src/kind/spawn-exec.js";
import type { KindLabState } from "../../src/kind/state.js";
import type { KindTools } from "../../src/kind/tools.js";
import type { IpFamily } from "../../src/netns/plan.js";
import type { StackKind } from "../../src/stack/manifests.js";

/**
 * An e2e test's kind cluster on this machine's engine: two workers in two zones (inside two cores), kube-proxy
 * in iptables mode, the stack asked for, the address families asked for (their default ranges); a cluster of the
 * same name an earlier run did not take down goes first.
 */
export async function upTestCluster(
  engine: DockerEngine,
  dir: string,
  name: string,
  stackKind: StackKind,
  ipFamily: IpFamily = "ipv4",
) {
  Object.assign(process.env, engine.env);
  const tools = await kindToolsOnThisMachine(process.stderr);
  await removeKindNodes(spawnExec(join(dir, "leftovers.log")), tools.docker, name);
  const state = await kindLabUp({
    stateDir: dir,
    input: { name, nodes: 2, zones: 2, ipFamily },
    stack: "iptables",
    stackKind,
    timeoutSeconds: 600,
    // Ryuk removes the nodes if this test process dies before its `down` (where its image can be had).
    reap: true,
  });
  return { tools, state, kubectl: kindKubectl(tools, state, engine.env) };
}

/** kubectl against a kind lab's own kubeconfig; its stdout, or an error with its stderr. */
export function kindKubectl(tools: KindTools, state: KindLabState, env: NodeJS.ProcessEnv) {
  return (...args: string[]): string => {
    const r = spawnSync(tools.kubectl, ["--kubeconfig", state.kubeconfig, ...args], {
      encoding: "utf8",
      env,
    });
    if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr.trim()}`);
    return r.stdout.trim();
  };
}

/** A pod's one JSON line: a one-shot probe from one of our images (it has node) that prints and exits. */
export function runProbe(
  kubectl: (...args: string[]) => string,
  name: string,
  image: string,
  script: string,
  runFlags: string[] = [],
) {
  kubectl(
    ...["run", name, `--image=${image}`, "--image-pull-policy=IfNotPresent", "--restart=Never", ...runFlags],
    ...["--command", "--", "/nodejs/bin/node", "-e", script],
  );
  // Until it has ended, either way; one that failed or never ended says where it stood and what it printed.
  let phase = "";
  for (let i = 0; i < 180 && phase !== "Succeeded" && phase !== "Failed"; i++) {
    if (i > 0) spawnSync("sleep", ["1"]);
    phase = kubectl("get", "pod", name, "-o", "jsonpath={.status.phase}");
  }
  if (phase !== "Succeeded") {
    const status = kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName} {.status.containerStatuses}");
    const logs = (() => {
      try {
        return kubectl("logs", name);
      } catch (err) {
        return (err as Error).message;
      }
    })();
    throw new Error(
      `probe pod ${name} ended ${phase || "never"} (node and status: ${status}); its log: ${logs}`,
    );
  }
  return JSON.parse(kubectl("logs", name)) as unknown;
}

import { spawnSync } from "node:child_process";
import type { KindLabState } from "../../src/kind/state.js";
import type { KindTools } from "../../src/kind/tools.js";

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
  kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", `pod/${name}`, "--timeout=120s");
  return JSON.parse(kubectl("logs", name)) as unknown;
}

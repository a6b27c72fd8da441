// A lab for an end-to-end test: its own free control-plane ports, agents attached to the test process (they die
// with it), quiet progress. Each test file passes its own prefix and networks so labs never meet.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freeControlPlanePorts } from "../../src/controlplane/ports.js";
import { labUp } from "../../src/netns/lab-up.js";
import type { LabInput } from "../../src/netns/plan.js";
import type { LabState } from "../../src/netns/state.js";
import { repoRoot } from "../../src/self.js";
import type { ProxyMode, StackKind } from "../../src/stack/manifests.js";
import { missingControlPlane } from "../../src/testing.js";
import type { UpstreamBinary } from "../../src/upstream/binaries.js";

/** Why a test of a lab with the stack cannot run here (not root, apps not built, binaries missing), or undefined. */
export function stackLabSkip(extra: readonly UpstreamBinary[] = []): string | undefined {
  if (process.getuid?.() !== 0) return "the netns runtime needs root (network namespaces, veth, routes)";
  const apps = ["kube-proxy", "slice-controller", "cluster-dns"];
  const unbuilt = apps.filter((a) => !existsSync(join(repoRoot, "apps", a, "dist", "main.js")));
  if (unbuilt.length > 0) return `apps not built (${unbuilt.join(", ")}); run npx turbo run build`;
  return missingControlPlane(["kube-controller-manager", "kube-scheduler", ...extra]);
}

export async function upTestLab(
  stateDir: string,
  lab: Partial<LabInput>,
  options: { stack?: ProxyMode; stackKind?: StackKind; readyTimeoutMs?: number } = {},
): Promise<LabState> {
  return labUp({
    stateDir,
    lab,
    ports: await freeControlPlanePorts(),
    detached: false,
    ...(options.stack ? { stack: options.stack } : {}),
    ...(options.stackKind ? { stackKind: options.stackKind } : {}),
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    out: { write: () => {} },
  });
}

export const sh = (argv: string[]) => execFileSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8" });
export const shIn = (netns: string, argv: string[]) => sh(["ip", "netns", "exec", netns, ...argv]);

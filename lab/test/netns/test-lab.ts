// A lab for an end-to-end test: its own free control-plane ports, agents attached to the test process (they die
// with it), quiet progress. Each test file passes its own prefix and networks so labs never meet.
import { freePort } from "../../src/controlplane/ports.js";
import { labUp } from "../../src/netns/lab-up.js";
import type { LabInput } from "../../src/netns/plan.js";
import type { LabState } from "../../src/netns/state.js";
import type { ProxyMode } from "../../src/stack/manifests.js";

export async function upTestLab(
  stateDir: string,
  lab: Partial<LabInput>,
  options: { stack?: ProxyMode; readyTimeoutMs?: number } = {},
): Promise<LabState> {
  return labUp({
    stateDir,
    lab,
    ports: {
      apiserver: await freePort(),
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
    },
    detached: false,
    ...(options.stack ? { stack: options.stack } : {}),
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    out: { write: () => {} },
  });
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { realClock, sleep } from "@switchyard/kube";
import { ensurePrivateDir } from "@switchyard/testbed/private-files";
import { Progress, type ProgressSink } from "@switchyard/testbed/progress";
import { readVersions } from "@switchyard/testbed/upstream";
import { repoRoot as defaultRepoRoot } from "../self.js";
import { type ProxyMode, readStackParts, type StackKind, upstreamNoEbpf } from "../stack/manifests.js";
import { StepClock } from "../timing/step-times.js";
import { kindEbpfPlaces } from "./ebpf-mounts.js";
import { imagePlan } from "./images.js";
import { kubeconfigServer } from "./kubeconfig.js";
import { exportNodeLogs, kindDown, removeKindNodes } from "./lab-down.js";
import { loadImagesIntoNodes } from "./load-images.js";
import { kindToolsOnThisMachine } from "./machine-tools.js";
import { kindStack } from "./manifests.js";
import { chooseNodeImage, localNodeImageBuild } from "./node-image.js";
import { defaultKindInput, type KindLabInput, kindNodes, validateKindInput } from "./options.js";
import { partTimer } from "./part-times.js";
import { kindPaths } from "./paths.js";
import { provisionKindCluster } from "./provision.js";
import { runKindSteps, type StepDeps, stepName } from "./run-steps.js";
import { ryukAvailable } from "./ryuk.js";
import { spawnExec } from "./spawn-exec.js";
import { type KindLabState, readKindState, writeKindState } from "./state.js";
import { kindUpSteps } from "./steps.js";
import type { KindTools } from "./tools.js";

/** Seconds each of kind's waits may take unless `up --timeout` says otherwise. */
export const defaultKindTimeoutSeconds = 300;

export interface KindUpOptions {
  stateDir: string;
  input?: Partial<KindLabInput>;
  /** Deploy a stack with this kube-proxy mode; without it, nodes only (no images built). */
  stack?: ProxyMode;
  /** Whose stack: Switchyard's (the default) or upstream's, as kubeadm installs it. */
  stackKind?: StackKind;
  /** Seconds each wait may take; image pulls and builds make kind slower than netns. */
  timeoutSeconds?: number;
  out?: ProgressSink;
  /** Injected by tests; found on the machine (and kind built when missing) otherwise. */
  tools?: KindTools;
  deps?: StepDeps;
  repoRoot?: string;
  /** Injected by tests; scripts/kind-node-image.mjs otherwise. */
  buildNodeImage?: () => Promise<string>;
  /** Leave the nodes to Ryuk when this process ends (tests; where no Ryuk image can be had, it stays off). */
  reap?: boolean;
}

/**
 * Brings a kind lab up: Switchyard's images built while a kind cluster without kube-proxy and without the upstream
 * EndpointSlice controllers is created, the images loaded into its nodes while they become Ready, then the stack applied from
 * apps/<app>/deploy and waited for. With upstream's stack the cluster keeps kubeadm's kube-proxy and
 * controllers, and kubeadm's CoreDNS stays; they are waited for the same way. Each step is timed (lab.json's
 * `steps`). A failed `up` after the cluster's creation began exports kind's logs into the state folder and deletes
 * the cluster.
 */
export async function kindLabUp(o: KindUpOptions): Promise<KindLabState> {
  // The ranges default to the family's (kind's defaults for it).
  const input: KindLabInput = { ...defaultKindInput(readVersions(), o.input?.ipFamily), ...o.input };
  validateKindInput(input);
  if (o.stack === "ebpf" && o.stackKind === "upstream") throw new Error(upstreamNoEbpf);
  const out = o.out ?? process.stderr;
  const progress = new Progress("lab kind", out);
  const paths = kindPaths(o.stateDir);
  const root = o.repoRoot ?? defaultRepoRoot;
  const tools = o.tools ?? (await kindToolsOnThisMachine(out));
  const clock = new StepClock(o.deps?.now ?? Date.now);
  const machine = o.deps ?? machineDeps(paths.commandLog, progress, tools.docker, clock);
  // From the first node container on, there may be a cluster to remove when `up` fails.
  let provisioned = false;
  const deps: StepDeps = {
    ...machine,
    provision: (spec) => {
      provisioned = true;
      return machine.provision(spec);
    },
  };
  const started = deps.now();

  if (readKindState(o.stateDir)) {
    progress.update("removing the previous kind lab of this state folder", true);
    await clock.time("removing the previous lab", () =>
      kindDown(o.stateDir, { keepFiles: true, tools, deps }),
    );
  }
  ensurePrivateDir(paths.dir);
  mkdirSync(paths.logs, { recursive: true });
  progress.update(`node image ${input.nodeImage}`, true);
  const nodeImage = await clock.time("node image", () =>
    chooseNodeImage(input.nodeImage, input.nodeImage === defaultKindInput(readVersions()).nodeImage, {
      exec: deps.exec,
      docker: tools.docker,
      buildLocal: o.buildNodeImage ?? localNodeImageBuild(root, deps.exec),
      say: (line) => progress.update(line, true),
    }),
  );
  input.nodeImage = nodeImage.image;
  const stackKind = o.stackKind ?? "switchyard";
  // Upstream's stack applies nothing; our images are still built and loaded, ready to be swapped in.
  const parts = readStackParts(root);
  const proxy = o.stack ? kindStack(parts.proxy, input, o.stack) : [];
  const rest = o.stack ? kindStack(parts.rest, input, o.stack) : [];
  const ours = [...proxy, ...rest];
  const applied = stackKind === "switchyard" ? { proxy, rest } : { proxy: [], rest: [] };
  const images = o.stack ? imagePlan(ours, (p) => existsSync(join(root, p))) : [];
  const timeoutSeconds = o.timeoutSeconds ?? defaultKindTimeoutSeconds;
  const steps = kindUpSteps({
    input,
    paths,
    tools,
    repoRoot: root,
    node: process.execPath,
    timeoutSeconds,
    ...(o.reap
      ? { reap: await ryukAvailable(deps.exec, tools.docker, (l) => progress.update(l, true)) }
      : {}),
    ...(o.stack ? { stack: { kind: stackKind, proxyMode: o.stack, ...applied, images } } : {}),
  });
  const state: KindLabState = {
    runtime: "kind",
    input,
    nodes: kindNodes(input),
    kubeconfig: paths.kubeconfig,
    server: "",
    startedAt: new Date().toISOString(),
    images: images.map((i) => i.image),
    ebpf: kindEbpfPlaces,
  };
  writeKindState(o.stateDir, state);

  const firstStack = steps.findIndex((s) => s.phase === "stack");
  const nodeSteps = firstStack < 0 ? steps : steps.slice(0, firstStack);
  try {
    await runKindSteps(nodeSteps, deps, progress, timeoutSeconds * 1000, clock);
    state.server = kubeconfigServer(readFileSync(paths.kubeconfig, "utf8"));
    state.nodesSeconds = (deps.now() - started) / 1000;
    writeKindState(o.stateDir, state);
    if (o.stack && firstStack >= 0) {
      const stackStarted = deps.now();
      await runKindSteps(steps.slice(firstStack), deps, progress, timeoutSeconds * 1000, clock);
      state.stack = { kind: stackKind, proxyMode: o.stack, seconds: (deps.now() - stackStarted) / 1000 };
    }
  } catch (err) {
    // How far it got, for whoever reads lab.json after a failed `up`.
    writeKindState(o.stateDir, { ...state, steps: clock.times });
    if (provisioned) {
      progress.update("up failed: saving the nodes' logs and removing the cluster", true);
      await exportNodeLogs(deps.exec, tools.docker, input.name, join(paths.logs, "kind")).catch(() => {});
      await removeKindNodes(deps.exec, tools.docker, input.name).catch(() => {});
    }
    throw err;
  }
  state.upSeconds = (deps.now() - started) / 1000;
  state.steps = clock.times;
  writeKindState(o.stateDir, state);
  const family = input.ipFamily && input.ipFamily !== "ipv4" ? ` (${input.ipFamily})` : "";
  progress.done(
    `${input.nodes} workers and a control plane ready${family}${o.stack ? ` with ${stackKind}'s stack (kube-proxy ${o.stack})` : ""}, apiserver at ${state.server}`,
  );
  return state;
}

/**
 * The real runner: commands through spawnExec (output into the state folder's log), the nodes through
 * testcontainers (each part of the cluster's creation a row of the timing table), images streamed into them,
 * files, the clock.
 */
function machineDeps(log: string, progress: Progress, docker: string, clock: StepClock): StepDeps {
  return {
    exec: spawnExec(log, (line) => progress.update(line.slice(0, 120))),
    provision: async (spec) => {
      const parts = partTimer(clock, (line) => stepName({ phase: "cluster", what: line }));
      try {
        await provisionKindCluster(spec, (line) => {
          progress.update(line, true);
          parts.next(line);
        });
      } finally {
        parts.end();
      }
    },
    loadImages: (images, nodes) => loadImagesIntoNodes(docker, images, nodes, log),
    writeFile: (path, content) => writeFileSync(path, content),
    sleep: (ms) => sleep(realClock, ms),
    now: Date.now,
  };
}

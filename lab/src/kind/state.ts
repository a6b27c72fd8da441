import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { ensurePrivateDir } from "@switchyard/testbed/private-files";
import type { KindEbpfPlaces } from "../stack/ebpf-places.js";
import type { ProxyMode, StackKind } from "../stack/manifests.js";
import type { StepTime } from "../timing/step-times.js";
import type { KindLabInput, KindNodePlan } from "./options.js";
import { kindPaths } from "./paths.js";

/** What a kind `up` leaves in lab.json for `down`, `status`, `kubeconfig` and `switchyard-lab kubectl`. */
export interface KindLabState {
  runtime: "kind";
  input: KindLabInput;
  nodes: KindNodePlan[];
  /** Written before the cluster is created, so `down` after a crash still knows the cluster's name. */
  kubeconfig: string;
  /** The apiserver as the host reaches it (kind publishes it on a loopback port); empty until created. */
  server: string;
  startedAt: string;
  /** The image tags built from apps/<app>/Dockerfile and loaded into the nodes. */
  images: string[];
  upSeconds?: number;
  /** Seconds from the start of `up` until every node was Ready (image builds included). */
  nodesSeconds?: number;
  /** Each step of `up` with its start and duration (steps overlap where they ran at once); absent in older labs. */
  steps?: StepTime[];
  /** `kind` is absent in the state of labs made before upstream's stack could be chosen: Switchyard's. */
  stack?: { kind?: StackKind; proxyMode: ProxyMode; seconds: number };
  /** Where every node's proxy finds its cgroup2 mount and BPF file system; absent in labs made before them. */
  ebpf?: KindEbpfPlaces;
}

export function readKindState(dir: string): KindLabState | undefined {
  const file = kindPaths(dir).stateFile;
  if (!existsSync(file)) return undefined;
  const state = JSON.parse(readFileSync(file, "utf8")) as { runtime?: string };
  return state.runtime === "kind" ? (state as KindLabState) : undefined;
}

export function writeKindState(dir: string, state: KindLabState): void {
  ensurePrivateDir(dir);
  writeFileSync(kindPaths(dir).stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

// What the eBPF backend needs to end stale flows (stale-flows.ts): a way to end the sockets sent along them. The
// kernel's is apply/bpf-destroy.ts (an iterator over each network namespace's UDP sockets); tests give their own.

import type { IPFamily } from "@switchyard/basics";
import type { StaleFlow } from "./stale-flows.js";

export interface SocketEndResult {
  /** Sockets ended, in every namespace and flow. */
  readonly ended: number;
  /** The flows that had sockets ended, with how many. */
  readonly endedByFlow: ReadonlyArray<{ readonly flow: StaleFlow; readonly ended: number }>;
  /** The network namespaces looked through. */
  readonly namespaces: number;
  /** What failed on the way (a namespace that could not be entered, a run the kernel refused); the rest went on. */
  readonly errors: readonly Error[];
}

export interface SocketEnder {
  /** Ends the connected UDP sockets of `family` that the socket programs sent along one of `flows`. */
  end(family: IPFamily, flows: readonly StaleFlow[]): Promise<SocketEndResult>;
}

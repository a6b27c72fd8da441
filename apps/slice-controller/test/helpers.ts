// Shared by the control-plane suites: the test bed's minimal API client and object builders (from
// @switchyard/testbed), plus polling and slice summaries for this program's tests.

import type { EndpointSlice } from "@switchyard/slice-controller";
import { Api, listSlices, SLICES } from "@switchyard/testbed";
import type { Pod } from "kubernetes-types/core/v1.js";

export {
  createNamespace,
  createNode,
  createPod,
  createPods,
  createService,
  deletePod,
  listSlices,
  type PodSpecOptions,
  setPodReady,
} from "@switchyard/testbed";
export { Api, SLICES };

/** One endpoint as a test cares about it: "ip ready/serving/terminating". */
export function endpointLines(slices: readonly EndpointSlice[]): string[] {
  const lines: string[] = [];
  for (const slice of slices) {
    for (const e of slice.endpoints ?? []) {
      const c = e.conditions ?? {};
      lines.push(
        `${e.addresses.join(",")} ${c.ready ? "R" : "-"}${c.serving ? "S" : "-"}${c.terminating ? "T" : "-"}`,
      );
    }
  }
  return lines.sort();
}

export function sliceSizes(slices: readonly EndpointSlice[]): number[] {
  return slices.map((s) => (s.endpoints ?? []).length).sort((a, b) => b - a);
}

/** A Pod's IPv4 address in the test plan: 10.<ns index>.x.y from a counter. */
export function podIP(n: number): string {
  return `10.244.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

export function summary(slices: readonly EndpointSlice[]): string {
  return slices
    .map(
      (s) =>
        `${s.metadata?.name} ${s.addressType} [${(s.ports ?? []).map((p) => p.port).join(",")}] n=${(s.endpoints ?? []).length}`,
    )
    .join("\n");
}

export async function slicesOf(api: Api, namespace: string, service: string): Promise<EndpointSlice[]> {
  return (await listSlices(api, namespace, service)).slices;
}

export type { Pod };

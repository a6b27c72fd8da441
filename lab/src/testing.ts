// What other packages' tests take from the lab (`@switchyard/lab/testing`): Switchyard's shipped manifests, read
// and applied as the lab deploys them. The control plane, the API client and the rest are @switchyard/testbed's.
import type { Api } from "@switchyard/testbed";
import { objectPath } from "./stack/apply.js";
import type { KubeObject } from "./stack/manifests.js";

export { applyOrder, objectPath } from "./stack/apply.js";
export { type KubeObject, readManifests } from "./stack/manifests.js";

/** Server-side apply of each object in turn, as `kubectl apply --server-side` would (in the order given). */
export async function applyManifests(api: Api, objects: readonly KubeObject[]): Promise<void> {
  for (const obj of objects)
    await api.call(
      "PATCH",
      `${objectPath(obj)}?fieldManager=switchyard-test&force=true`,
      obj,
      "application/apply-patch+yaml",
    );
}

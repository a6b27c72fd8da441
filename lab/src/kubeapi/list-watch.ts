import { realClock, sleep as sleepOn } from "@switchyard/kube";
import { ApiError, type KubeClient } from "./client.js";

interface Listed {
  metadata?: { uid?: string; resourceVersion?: string };
}

export type ChangeHandler<T> = (type: "upsert" | "delete", object: T) => void;

export interface ListWatchOptions {
  /** A collection path with its query, e.g. /api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1 */
  path: string;
  onError?: (err: Error) => void;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Keeps `onChange` told about every object of a collection: list, then watch from the list's resourceVersion;
 * after a closed stream it resumes, after 410 Gone or any error it lists again (reporting objects that vanished
 * meanwhile as deleted). Objects are handed over as parsed and must be treated as read-only.
 */
export function listWatch<T extends Listed>(
  client: KubeClient,
  options: ListWatchOptions,
  onChange: ChangeHandler<T>,
): { stop(): void; synced: Promise<void> } {
  const abort = new AbortController();
  const sleep = options.sleep ?? ((ms: number) => sleepOn(realClock, ms));
  const known = new Map<string, T>();
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((r) => {
    markSynced = r;
  });

  const relist = async (): Promise<string> => {
    const list = await client.call<{ metadata: { resourceVersion: string }; items: T[] }>(
      "GET",
      options.path,
    );
    const seen = new Set<string>();
    for (const item of list.items) {
      const uid = item.metadata?.uid ?? "";
      seen.add(uid);
      known.set(uid, item);
      onChange("upsert", item);
    }
    for (const [uid, item] of known) {
      if (seen.has(uid)) continue;
      known.delete(uid);
      onChange("delete", item);
    }
    markSynced();
    return list.metadata.resourceVersion;
  };

  const run = async () => {
    let rv = "";
    let failures = 0;
    while (!abort.signal.aborted) {
      try {
        if (!rv) rv = await relist();
        for await (const event of client.watch<T>(options.path, rv, abort.signal)) {
          if (event.type === "ERROR") {
            const status = event.object as unknown as { code?: number; message?: string };
            throw new ApiError(status.code ?? 500, "", `watch ${options.path}: ${status.message ?? "error"}`);
          }
          rv = event.object.metadata?.resourceVersion ?? rv;
          if (event.type === "BOOKMARK") continue;
          const uid = event.object.metadata?.uid ?? "";
          if (event.type === "DELETED") {
            known.delete(uid);
            onChange("delete", event.object);
          } else {
            known.set(uid, event.object);
            onChange("upsert", event.object);
          }
        }
        failures = 0;
      } catch (err) {
        if (abort.signal.aborted) return;
        rv = "";
        failures++;
        if (!(err instanceof ApiError && err.status === 410)) options.onError?.(err as Error);
        await sleep(Math.min(200 * 2 ** failures, 5000));
      }
    }
  };
  void run();
  return { stop: () => abort.abort(), synced };
}

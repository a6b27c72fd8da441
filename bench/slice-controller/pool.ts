// Many requests at once against the lab apiserver, spread round robin over several clients (each with its own
// keep-alive connections).
import { ApiError } from "@switchyard/kube";
import { Api } from "@switchyard/testbed";

export class ApiPool {
  readonly #apis: Api[];

  constructor(server: string, stateDir: string, instances = 2) {
    this.#apis = Array.from({ length: instances }, () => new Api(server, stateDir));
  }

  /** The client for the i-th request: round robin over the instances. */
  pick(i: number): Api {
    return this.#apis[i % this.#apis.length] as Api;
  }

  get first(): Api {
    return this.pick(0);
  }

  close(): void {
    for (const api of this.#apis) api.close();
  }
}

/** Runs `fn` over `items` with at most `limit` calls in flight; rejects on the first failure. */
export async function forEachConcurrent<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Retries a request that failed for a reason unrelated to the request itself (a reset socket, a
 * 5xx under load). A create retried after a lost answer may find its object: 409 then means done.
 */
export async function retrying<T>(what: () => Promise<T>, attempts = 5): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await what();
    } catch (err) {
      if (err instanceof ApiError && err.code === 409 && attempt > 1) return undefined;
      const transient = !(err instanceof ApiError) || err.code >= 500 || err.code === 429;
      if (!transient || attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

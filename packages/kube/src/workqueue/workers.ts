import { discardLogger, type Logger } from "../log/logger.js";
import type { RateLimitingQueue } from "./rate-limiting-queue.js";

export type RetryOutcome = "done" | "retried" | "dropped";

/**
 * The usual end of processing one item: forget it on success, retry it
 * rate-limited on failure, and give up after `maxRetries` requeues.
 * Does not call `done`.
 */
export function retryOrForget<T>(
  queue: RateLimitingQueue<T>,
  item: T,
  err: unknown,
  maxRetries: number,
): RetryOutcome {
  if (err === undefined) {
    queue.forget(item);
    return "done";
  }
  if (queue.numRequeues(item) < maxRetries) {
    queue.addRateLimited(item);
    return "retried";
  }
  queue.forget(item);
  return "dropped";
}

export interface RunWorkersOptions {
  /** Requeues before an item is dropped; 15 by default. */
  maxRetries?: number;
  logger?: Logger;
}

/**
 * Runs `count` workers until the queue shuts down: get, process, then
 * retryOrForget and done. Resolves when every worker has exited.
 */
export async function runWorkers<T>(
  queue: RateLimitingQueue<T>,
  count: number,
  process: (item: T) => Promise<void>,
  options: RunWorkersOptions = {},
): Promise<void> {
  const log = (options.logger ?? discardLogger).child({ queue: queue.name });
  const maxRetries = options.maxRetries ?? 15;
  const worker = async () => {
    for (;;) {
      const next = await queue.get();
      if (next.shutdown) return;
      let error: unknown;
      try {
        await process(next.item);
      } catch (err) {
        error = err ?? new Error("processing failed");
      }
      const outcome = retryOrForget(queue, next.item, error, maxRetries);
      if (outcome === "retried") log.debug("retrying item", { item: String(next.item), error });
      if (outcome === "dropped")
        log.warn("dropping item after too many retries", { item: String(next.item), error });
      queue.done(next.item);
    }
  };
  await Promise.all(Array.from({ length: count }, worker));
}

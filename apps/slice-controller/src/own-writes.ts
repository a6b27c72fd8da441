import { type Clock, sleep } from "@switchyard/kube";

// Far below the 1 s backoff that a refused sync costs.
const WAIT_MS = 500;
const POLL_MS = 10;

/**
 * Waits briefly for the slice informer to show what the controller last wrote, polling `stale`.
 * On one Node thread the apiserver's answer to a write is usually handled before the watch event
 * echoing it, so the next sync of a busy Service would find its cache "stale" and be refused with a
 * backoff; kube-controller-manager, whose informer runs on its own goroutine, rarely is. Resolves
 * false if the cache is still behind when the wait is over.
 */
export async function ownWritesSeen(stale: () => boolean, clock: Clock): Promise<boolean> {
  const deadline = clock.now() + WAIT_MS;
  while (clock.now() < deadline) {
    await sleep(clock, POLL_MS);
    if (!stale()) return true;
  }
  return false;
}

import { ApiError, type RestClient, services } from "@switchyard/kube";

/**
 * One cheap request before anything starts, so a wrong address or a dead apiserver is reported as
 * one line naming the server instead of as informers retrying forever. Only transport failures
 * count: an apiserver that answers, even with 403, is reachable.
 */
export async function checkApiserver(client: RestClient, server: string, timeoutMs = 10_000): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await client.list(services, { limit: 1, signal });
  } catch (err) {
    if (err instanceof ApiError) return;
    const why = signal.aborted ? `no answer within ${timeoutMs / 1000}s` : (err as Error).message;
    throw new Error(`cannot reach the apiserver at ${server}: ${why}`);
  }
}

import {
  type Clock,
  type DeleteOptions,
  type KubeList,
  type KubeObject,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type ResourceDescriptor,
  type RestClient,
  realClock,
  sleep,
  TokenBucket,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from "@switchyard/kube";

// client-go's rest.Config fills these in for a zero --kube-api-qps / --kube-api-burst.
const CLIENT_GO_DEFAULT_QPS = 5;
const CLIENT_GO_DEFAULT_BURST = 10;

/**
 * Client-side rate limiting as kube-controller-manager applies --kube-api-qps and --kube-api-burst: every request,
 * watches included, first takes a token from this client's bucket. As in client-go, zero means the library default
 * and a negative QPS means no limit. kube-controller-manager builds one client (so one bucket) per controller, plus
 * one for informers and one for leader election; the app does the same with one wrapper each.
 */
export class ThrottledClient implements RestClient {
  readonly #inner: RestClient;
  readonly #bucket: TokenBucket | undefined;
  readonly #clock: Clock;
  readonly #fence: AbortSignal | undefined;

  /**
   * `fence`, when given, ends every request of this client, in flight or waiting for a token, once it aborts, and
   * fails every later one at once: the app fences its controllers' clients with the loss of the Lease.
   */
  constructor(inner: RestClient, qps: number, burst: number, clock: Clock = realClock, fence?: AbortSignal) {
    this.#inner = inner;
    this.#clock = clock;
    this.#fence = fence;
    const rate = qps === 0 ? CLIENT_GO_DEFAULT_QPS : qps;
    this.#bucket =
      rate > 0 ? new TokenBucket(rate, burst === 0 ? CLIENT_GO_DEFAULT_BURST : burst, clock) : undefined;
  }

  /** The caller's options with the fence joined to their signal. */
  #fenced<O extends { signal?: AbortSignal }>(opts: O | undefined): O | undefined {
    const fence = this.#fence;
    if (fence === undefined) return opts;
    return { ...(opts as O), signal: opts?.signal ? AbortSignal.any([opts.signal, fence]) : fence };
  }

  async #wait(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const delayMs = this.#bucket?.reserve() ?? 0;
    if (delayMs > 0) await sleep(this.#clock, delayMs, signal);
  }

  async get<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    given?: { namespace?: string; signal?: AbortSignal },
  ): Promise<T> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.get(res, name, opts);
  }

  async list<T extends KubeObject>(res: ResourceDescriptor<T>, given?: ListOptions): Promise<KubeList<T>> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.list(res, opts);
  }

  async create<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T, given?: WriteOptions): Promise<T> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.create(res, obj, opts);
  }

  async update<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T, given?: WriteOptions): Promise<T> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.update(res, obj, opts);
  }

  async patch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    type: PatchType,
    patch: unknown,
    given?: PatchOptions,
  ): Promise<T> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.patch(res, name, type, patch, opts);
  }

  async delete(res: ResourceDescriptor, name: string, given?: DeleteOptions): Promise<void> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    return this.#inner.delete(res, name, opts);
  }

  async *watch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    given?: WatchOptions,
  ): AsyncIterable<WatchEvent<T>> {
    const opts = this.#fenced(given);
    await this.#wait(opts?.signal);
    yield* this.#inner.watch(res, opts);
  }
}

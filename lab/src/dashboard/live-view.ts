/**
 * The latest view as JSON and who wants it. Changes come in bursts (a rollout is dozens of slice events), so
 * the view is made again at most every `minIntervalMs`, or ten times as long as making it took (a lab with
 * thousands of Services), and handed to every listener once.
 */
export class LiveView {
  #json = "{}";
  #timer: NodeJS.Timeout | undefined;
  #last = 0;
  #cost = 0;
  readonly #listeners = new Set<(json: string) => void>();

  constructor(
    private readonly make: () => unknown,
    private readonly minIntervalMs = 250,
  ) {}

  current(): string {
    return this.#json;
  }

  subscribe(listener: (json: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Something changed: publish now if the last publish is old enough, else once the interval has passed. */
  changed(): void {
    if (this.#timer) return;
    const wait = Math.max(0, this.#last + Math.max(this.minIntervalMs, this.#cost * 10) - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.publish();
    }, wait);
  }

  publish(): void {
    this.#last = Date.now();
    this.#json = JSON.stringify(this.make());
    this.#cost = Date.now() - this.#last;
    for (const listener of this.#listeners) listener(this.#json);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

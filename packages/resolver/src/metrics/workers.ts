import type { Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";
import type { Metrics } from "./metrics.js";

/**
 * Metrics across the processes of one server (switchyard-dns `-workers`). Each worker keeps its own
 * registry; a scrape that lands on any worker asks the primary, which collects every worker's series and
 * adds them up (gauges marked `first`, like build info, are taken once), so /metrics reads as one server.
 */

const COLLECT = "switchyard-dns:metrics-collect";
const COLLECTED = "switchyard-dns:metrics-collected";
const SCRAPE = "switchyard-dns:metrics-scrape";
const SCRAPED = "switchyard-dns:metrics-scraped";

type Series = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

interface Message {
  type?: string;
  id?: number;
  metrics?: Series;
  text?: string;
}

/** What a process can exchange messages with: `process` in a worker, a `Worker` in the primary. */
interface Channel {
  send?(message: unknown): unknown;
  on(event: "message", listener: (message: Message) => void): unknown;
  off(event: "message", listener: (message: Message) => void): unknown;
}

/** In a worker: hands this registry's series to the primary when it collects. */
export function answerCollects(metrics: Metrics, channel: Channel = process as unknown as Channel): void {
  channel.on("message", (m) => {
    if (m?.type !== COLLECT) return;
    void metrics.registry.getMetricsAsJSON().then((json) => {
      channel.send?.({ type: COLLECTED, id: m.id, metrics: json });
    });
  });
}

/** In a worker: the text /metrics serves, summed over every worker by the primary. */
export function scrapeThroughPrimary(
  channel: Channel = process as unknown as Channel,
): () => Promise<string> {
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        channel.off("message", listen);
        reject(new Error("the primary did not answer a metrics scrape within 5 s"));
      }, 5000);
      const listen = (m: Message) => {
        if (m?.type !== SCRAPED || m.id !== id) return;
        clearTimeout(timer);
        channel.off("message", listen);
        resolve(m.text ?? "");
      };
      channel.on("message", listen);
      channel.send?.({ type: SCRAPE, id });
    });
}

/** In the primary: answers a worker's scrape with every live worker's series added up. */
export function serveScrapes(worker: Worker, workers: () => Worker[]): void {
  worker.on("message", (m: Message) => {
    if (m?.type !== SCRAPE) return;
    void collect(workers()).then(
      (text) => worker.send({ type: SCRAPED, id: m.id, text }),
      (err: unknown) => worker.send({ type: SCRAPED, id: m.id, text: `# ${(err as Error).message}\n` }),
    );
  });
}

let collects = 0;

async function collect(workers: Worker[]): Promise<string> {
  const id = collects++;
  const parts = await Promise.all(
    workers
      .filter((w) => w.isConnected())
      .map(
        (w) =>
          new Promise<Series>((resolve) => {
            const timer = setTimeout(() => done([]), 2000);
            const listen = (m: Message) => {
              if (m?.type === COLLECTED && m.id === id) done(m.metrics ?? []);
            };
            const done = (got: Series) => {
              clearTimeout(timer);
              w.off("message", listen);
              resolve(got);
            };
            w.on("message", listen);
            w.send({ type: COLLECT, id });
          }),
      ),
  );
  return AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}

import type { Event, ObjectReference } from "kubernetes-types/core/v1.js";
import type { Clock } from "../util/clock.js";
import { formatTime } from "../util/meta-time.js";
import { TokenBucket } from "../util/token-bucket.js";

/** What the recorder should do with an event, decided synchronously. */
export type Correlation =
  | { action: "drop" }
  | { action: "create"; event: Event }
  /** `event` is the full Event under the existing name, for when the old one has expired. */
  | {
      action: "patch";
      event: Event;
      namespace: string;
      name: string;
      count: number;
      lastTimestamp: string;
      message: string;
    };

export interface CorrelatorOptions {
  clock: Clock;
  /** Spam filter per source+object: 25 events at once, then one per 5 minutes (client-go's defaults). */
  spamBurst?: number;
  spamQps?: number;
  /** Distinct messages for one source+object+type+reason within the window before they are combined; 10. */
  maxSimilar?: number;
  similarWindowMs?: number;
  /** Bound on remembered keys, oldest forgotten first; 4096. */
  cacheSize?: number;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

interface Similar {
  messages: Set<string>;
  since: number;
}

/**
 * client-go's EventCorrelator, reduced to decisions: drop (spam), create a
 * new Event, or bump the count of one already written. Identical events
 * become one Event with a growing count; many similar events with different
 * messages collapse into one "(combined from similar events)" Event.
 */
export class EventCorrelator {
  readonly #o: Required<CorrelatorOptions>;
  readonly #spam = new Map<string, TokenBucket>();
  readonly #similar = new Map<string, Similar>();
  readonly #seen = new Map<string, Seen>();

  constructor(options: CorrelatorOptions) {
    this.#o = {
      spamBurst: 25,
      spamQps: 1 / 300,
      maxSimilar: 10,
      similarWindowMs: 10 * 60_000,
      cacheSize: 4096,
      ...options,
    };
  }

  correlate(event: Event): Correlation {
    const now = this.#o.clock.now();
    const ref = event.involvedObject;
    const source = `${event.source?.component ?? ""}/${event.source?.host ?? ""}`;
    // Per event type too, as client-go since v1.31: a run of warnings must not use up the budget of
    // the Normal event that says the problem is gone.
    const spamKey = [source, refKey(ref), event.type].join("|");
    let bucket = this.#spam.get(spamKey);
    if (!bucket) {
      bucket = new TokenBucket(this.#o.spamQps, this.#o.spamBurst, this.#o.clock);
      remember(this.#spam, spamKey, bucket, this.#o.cacheSize);
    }
    if (!bucket.tryTake()) return { action: "drop" };

    const similarKey = [spamKey, event.reason].join("|");
    let similar = this.#similar.get(similarKey);
    if (!similar || now - similar.since > this.#o.similarWindowMs) {
      similar = { messages: new Set(), since: now };
      remember(this.#similar, similarKey, similar, this.#o.cacheSize);
    }
    similar.messages.add(event.message ?? "");
    const combined = similar.messages.size >= this.#o.maxSimilar;
    const message = combined
      ? `(combined from similar events): ${event.message ?? ""}`
      : (event.message ?? "");
    const dedupKey = combined ? similarKey : [similarKey, event.message].join("|");

    const timestamp = formatTime(now);
    const seen = this.#seen.get(dedupKey);
    if (seen) {
      seen.count++;
      const recreate: Event = {
        ...event,
        metadata: { ...event.metadata, name: seen.name, namespace: seen.namespace },
        message,
        count: seen.count,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
      };
      return {
        action: "patch",
        event: recreate,
        namespace: seen.namespace,
        name: seen.name,
        count: seen.count,
        lastTimestamp: timestamp,
        message,
      };
    }
    const name = event.metadata?.name ?? "";
    const namespace = event.metadata?.namespace ?? "default";
    remember(this.#seen, dedupKey, { name, namespace, count: 1 }, this.#o.cacheSize);
    return {
      action: "create",
      event: { ...event, message, count: 1, firstTimestamp: timestamp, lastTimestamp: timestamp },
    };
  }
}

function refKey(ref: ObjectReference): string {
  return [ref.apiVersion, ref.kind, ref.namespace, ref.name, ref.uid].join("/");
}

// Maps iterate in insertion order, so the first key is the oldest.
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}

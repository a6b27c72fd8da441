import { format } from "node:util";
import type { ObjectReference } from "kubernetes-types/core/v1.js";
import { discardLogger, type Logger } from "../log/logger.js";
import { isNotFound } from "../rest/api-error.js";
import type { RestClient } from "../rest/client.js";
import type { KubeObject } from "../rest/object.js";
import { events } from "../rest/resources.js";
import { type Clock, realClock } from "../util/clock.js";
import { type Correlation, type CorrelatorOptions, EventCorrelator } from "./correlator.js";

export type EventType = "Normal" | "Warning";

export interface EventRecorderOptions extends Omit<CorrelatorOptions, "clock"> {
  client: RestClient;
  /** source.component and reportingComponent, e.g. "switchyard-slice-controller". */
  component: string;
  /** source.host and reportingInstance, e.g. the node or pod name. */
  host?: string;
  clock?: Clock;
  logger?: Logger;
  /** Events waiting to be written beyond this are dropped; 1000 like client-go's broadcaster. */
  maxQueued?: number;
}

/**
 * Records core/v1 Events about objects, like client-go's record package:
 * callers never wait or fail; writes happen in the background, in order;
 * repeats are folded into counts; a spammy object is throttled; API failures
 * are logged and the event dropped.
 */
export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #correlator: EventCorrelator;
  #tail: Promise<void> = Promise.resolve();
  #queued = 0;

  constructor(options: EventRecorderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? discardLogger).child({ component: "event-recorder" });
    this.#correlator = new EventCorrelator({ ...options, clock: this.#clock });
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const ref = referenceTo(obj);
    const now = this.#clock.now();
    const decision = this.#correlator.correlate({
      metadata: {
        name: `${ref.name ?? "unknown"}.${eventSuffix(now)}`,
        namespace: ref.namespace || "default",
      },
      involvedObject: ref,
      type,
      reason,
      message,
      source: { component: this.#o.component, host: this.#o.host },
      reportingComponent: this.#o.component,
      reportingInstance: this.#o.host ?? "",
    });
    if (decision.action === "drop") {
      this.#log.debug("event throttled", { object: `${ref.namespace}/${ref.name}`, reason });
      return;
    }
    if (this.#queued >= (this.#o.maxQueued ?? 1000)) {
      this.#log.warn("event queue full, dropping event", { object: `${ref.namespace}/${ref.name}`, reason });
      return;
    }
    this.#queued++;
    this.#tail = this.#tail.then(() => this.#write(decision)).finally(() => this.#queued--);
  }

  /** printf-style message, e.g. eventf(svc, "Warning", "FailedSync", "%d endpoints skipped", n). */
  eventf(obj: KubeObject, type: EventType, reason: string, messageFormat: string, ...args: unknown[]): void {
    this.event(obj, type, reason, format(messageFormat, ...args));
  }

  /** Resolves once everything recorded so far has been written or dropped. */
  flush(): Promise<void> {
    return this.#tail;
  }

  async #write(decision: Exclude<Correlation, { action: "drop" }>): Promise<void> {
    const { client } = this.#o;
    try {
      if (decision.action === "create") {
        await client.create(events, decision.event);
        return;
      }
      try {
        const patch = {
          count: decision.count,
          lastTimestamp: decision.lastTimestamp,
          message: decision.message,
        };
        await client.patch(events, decision.name, "merge", patch, { namespace: decision.namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The Event expired (default TTL 1 h) or was deleted; write it again under the same name, like client-go.
        await client.create(events, decision.event);
      }
    } catch (err) {
      this.#log.warn("could not write event, dropping it", { error: err });
    }
  }
}

/** An ObjectReference to `obj`, for involvedObject. */
export function referenceTo(obj: KubeObject): ObjectReference {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata?.namespace,
    name: obj.metadata?.name,
    uid: obj.metadata?.uid,
    resourceVersion: obj.metadata?.resourceVersion,
  };
}

// client-go names events "<object>.<unix nanoseconds in hex>"; with only ms to hand, keep names unique
// by never reusing a value.
let lastNanos = 0n;
function eventSuffix(ms: number): string {
  let nanos = BigInt(Math.floor(ms)) * 1_000_000n;
  if (nanos <= lastNanos) nanos = lastNanos + 1n;
  lastNanos = nanos;
  return nanos.toString(16);
}

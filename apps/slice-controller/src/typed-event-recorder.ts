import { EventRecorder, type EventRecorderOptions, type EventType, type KubeObject } from "@switchyard/kube";

/**
 * An EventRecorder whose Warning events are throttled apart from its Normal ones. client-go's spam
 * filter (25 events, then one per 5 minutes, per source and object) has keyed on the event type too
 * since v1.31; @switchyard/kube's keys on source and object only. Without the split, a Service whose
 * Auto hints cannot be allocated uses up its budget with TopologyAwareHintsDisabled warnings on every
 * sync, and the TopologyAwareHintsEnabled that follows when hints come back is dropped, which
 * kube-controller-manager would have recorded. The correlator's other keys already include the type,
 * so two correlators, one per type, behave exactly like client-go's one.
 */
export class TypedEventRecorder extends EventRecorder {
  readonly #warnings: EventRecorder;

  constructor(options: EventRecorderOptions) {
    super(options);
    this.#warnings = new EventRecorder(options);
  }

  override event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (type === "Warning") this.#warnings.event(obj, type, reason, message);
    else super.event(obj, type, reason, message);
  }

  override async flush(): Promise<void> {
    await Promise.all([super.flush(), this.#warnings.flush()]);
  }
}

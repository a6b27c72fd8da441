import { parseGoDuration } from "@switchyard/basics";

/**
 * A duration argument as CoreDNS's plugins read one (Go's time.ParseDuration: `5s`, `1m30s`, `250ms`, `0`), in
 * milliseconds. Undefined for text Go refuses and for a negative duration, which no plugin here takes.
 */
export function parseDuration(text: string): number | undefined {
  const ms = parseGoDuration(text);
  return ms === undefined || ms < 0 ? undefined : ms;
}

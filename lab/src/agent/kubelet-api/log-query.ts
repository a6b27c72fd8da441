/** The kubelet's container-log options (v1.PodLogOptions), as its /containerLogs handler decodes and checks them. */
export interface LogQuery {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  /** Lines older than this (ms since the epoch) are left out: sinceTime, or now minus sinceSeconds. */
  sinceMs?: number;
}

/** A refusal as the kubelet answers it: the status and the body it writes. */
export interface QueryError {
  status: number;
  message: string;
}

// The kubelet's own wording; the JSON-in-plain-text bodies are upstream's (server.go has a TODO about them).
const undecodable: QueryError = { status: 400, message: `{"message": "Unable to decode query."}` };
const invalid: QueryError = { status: 422, message: `{"message": "Invalid request."}` };

// Go's strconv.ParseBool, which the query decoder uses.
const trueWords = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const falseWords = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/**
 * Decodes the query of GET /containerLogs/{namespace}/{pod}/{container}: a value that does not decode is a 400,
 * one that decodes but is out of range a 422 (ValidatePodLogOptions). `tail` is the legacy name of tailLines
 * ("all" meaning no limit). Only the whole log (`stream` absent or All) is served, both outputs as written, as a
 * kubelet without the PodLogsQuerySplitStreams gate (alpha, off) serves it, although the log keeps them apart.
 */
export function parseLogQuery(query: URLSearchParams, now: number): LogQuery | QueryError {
  const q = new URLSearchParams(query);
  const tail = q.get("tail");
  if (tail) {
    if (tail === "all") q.delete("tailLines");
    else q.set("tailLines", tail);
  }
  const flags = { follow: false, previous: false, timestamps: false };
  for (const name of ["follow", "previous", "timestamps"] as const) {
    const value = q.get(name);
    if (value === null || value === "") continue;
    if (trueWords.has(value)) flags[name] = true;
    else if (!falseWords.has(value)) return undecodable;
  }
  const ints: Partial<Record<"tailLines" | "limitBytes" | "sinceSeconds", number>> = {};
  for (const name of ["tailLines", "limitBytes", "sinceSeconds"] as const) {
    const value = q.get(name);
    if (value === null || value === "") continue;
    if (!/^[+-]?\d+$/.test(value)) return undecodable;
    ints[name] = Number(value);
  }
  const sinceTime = q.get("sinceTime");
  const sinceTimeMs = sinceTime ? parseRfc3339(sinceTime) : undefined;
  if (Number.isNaN(sinceTimeMs)) return undecodable;
  const stream = q.get("stream");
  if (stream && stream !== "All")
    return {
      status: 400,
      message: `unable to return the given log stream: "${stream}". Please enable PodLogsQuerySplitStreams feature gate in kubelet`,
    };

  if (ints.tailLines !== undefined && ints.tailLines < 0) return invalid;
  if (ints.limitBytes !== undefined && ints.limitBytes < 1) return invalid;
  if (ints.sinceSeconds !== undefined && sinceTimeMs !== undefined) return invalid;
  if (ints.sinceSeconds !== undefined && ints.sinceSeconds < 1) return invalid;
  const sinceMs = ints.sinceSeconds !== undefined ? now - ints.sinceSeconds * 1000 : sinceTimeMs;
  return {
    ...flags,
    ...(ints.tailLines !== undefined ? { tailLines: ints.tailLines } : {}),
    ...(ints.limitBytes !== undefined ? { limitBytes: ints.limitBytes } : {}),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
  };
}

export function isQueryError(q: LogQuery | QueryError): q is QueryError {
  return "status" in q;
}

/** RFC3339 with a zone (Z or ±hh:mm), as metav1.Time decodes; NaN for anything else. */
function parseRfc3339(value: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return Number.NaN;
  return Date.parse(value);
}

import { splitLabels } from "../../wire/name.js";

/**
 * A query name taken apart by the DNS spec grammar, read right to left after the zone:
 * `[_port._proto | endpoint] . service . namespace . (svc|pod)`. Empty fields were not in the name.
 */
export interface RecordRequest {
  port: string;
  protocol: string;
  endpoint: string;
  service: string;
  namespace: string;
  /** "svc", "pod", or "" for the zone apex and the bare `svc`/`pod` names. */
  podOrSvc: "" | "svc" | "pod";
}

/**
 * Parses `relative` (the lower-cased name with the zone removed, no trailing dot). Names that do not fit
 * the grammar give undefined; CoreDNS answers them NXDOMAIN. (Not an exception: search-path expansions
 * make these common, and building an Error with its stack trace for each was a visible cost.)
 */
export function parseRequest(relative: string): RecordRequest | undefined {
  const r: RecordRequest = { port: "", protocol: "", endpoint: "", service: "", namespace: "", podOrSvc: "" };
  if (relative === "" || relative === "svc" || relative === "pod") return r;
  const labels = splitLabels(relative);
  let last = labels.length - 1;
  const kind = labels[last];
  if (kind !== "svc" && kind !== "pod") return undefined;
  r.podOrSvc = kind;
  if (--last < 0) return r;
  r.namespace = labels[last] ?? "";
  if (--last < 0) return r;
  r.service = labels[last] ?? "";
  if (--last < 0) return r;
  if (last === 0) {
    r.endpoint = labels[0] ?? "";
  } else if (last === 1) {
    r.protocol = stripUnderscore(labels[1] ?? "");
    r.port = stripUnderscore(labels[0] ?? "");
  } else {
    return undefined; // too many labels
  }
  return r;
}

function stripUnderscore(label: string): string {
  return label.startsWith("_") ? label.slice(1) : label;
}

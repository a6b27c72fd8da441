import { Logger } from "@switchyard/kube";

/**
 * A logger for the informers that writes CoreDNS-style lines: CoreDNS shows client-go's list/watch
 * failures (`[ERROR] plugin/kubernetes: ... Failed to watch ...`), and without them a server that never
 * syncs says nothing about why. Only warnings and errors: routine relists stay quiet.
 */
export function informerLogger(log: (line: string) => void): Logger {
  return new Logger({ level: "warn", out: { write: (json: string) => log(toCoreDnsLine(json)) } });
}

/**
 * One structured log line as `[ERROR] plugin/kubernetes: <resource>: <msg>: <error>`; an object the
 * informer skipped is named too: `<resource>: skipping an object that failed: <ns/name> (<stage>): <error>`.
 */
export function toCoreDnsLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `[ERROR] plugin/kubernetes: ${json.trim()}`;
  }
  const level = entry.level === "error" || entry.level === "warn" ? "ERROR" : "INFO";
  const object =
    typeof entry.object === "string" ? `${entry.object}${entry.stage ? ` (${entry.stage})` : ""}` : undefined;
  const parts = [entry.reflector ?? entry.informer, entry.msg, object, entry.error].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return `[${level}] plugin/kubernetes: ${parts.join(": ")}`;
}

import { type LogEntry, Logger } from "@switchyard/kube";

/**
 * A logger for the informers that writes CoreDNS-style lines: CoreDNS shows client-go's list/watch
 * failures (`[ERROR] plugin/kubernetes: ... Failed to watch ...`), and without them a server that never
 * syncs says nothing about why. Only warnings and errors: routine relists stay quiet.
 */
export function informerLogger(log: (line: string) => void): Logger {
  return new Logger({ level: "warn", format: coreDnsLine, out: { write: log } });
}

/**
 * One entry as `[ERROR] plugin/kubernetes: <resource>: <msg>: <error>`; an object the informer skipped is
 * named too: `<resource>: skipping an object that failed: <ns/name> (<stage>): <error>`.
 */
function coreDnsLine(entry: LogEntry): string {
  const { fields } = entry;
  const level = entry.level === "error" || entry.level === "warn" ? "ERROR" : "INFO";
  const object =
    typeof fields.object === "string"
      ? `${fields.object}${fields.stage ? ` (${fields.stage})` : ""}`
      : undefined;
  const parts = [fields.reflector ?? fields.informer, entry.msg, object, fields.error].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return `[${level}] plugin/kubernetes: ${parts.join(": ")}`;
}

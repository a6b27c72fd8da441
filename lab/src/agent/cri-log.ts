/**
 * Container log lines in the CRI format the kubelet reads (`<time> <stream> <tag> <text>`, one per line), so every
 * line keeps the moment it was written: `timestamps`, `sinceSeconds` and `sinceTime` need it. The time has nine
 * fixed fractional digits, as the runtime writes it; the tag is F (a full line) or P (a part, no newline after).
 */
export type LogStream = "stdout" | "stderr";

export interface LogLine {
  /** Milliseconds since the epoch: when the agent read the line from the container's output. */
  time: number;
  /** The output the container wrote it to. */
  stream: LogStream;
  /** The line as the container wrote it, with its newline unless it was cut off (a P line). */
  text: string;
}

/** RFC3339 with nine fractional digits in UTC, the kubelet's `timestamps=true` prefix (RFC3339NanoFixed). */
export function formatLogTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
}

export function formatCriLine(line: LogLine): string {
  const full = line.text.endsWith("\n");
  return `${formatLogTime(line.time)} ${line.stream} ${full ? "F" : "P"} ${full ? line.text : `${line.text}\n`}`;
}

/** The lines of a CRI log file's content; lines that do not parse are skipped, as the kubelet skips them. */
export function parseCriLog(content: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of content.split("\n")) {
    // The s flag: a terminal's lines end in \r\n, and without it . stops at the \r.
    const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(raw);
    if (!m) continue;
    const time = Date.parse(m[1] ?? "");
    if (Number.isNaN(time)) continue;
    lines.push({ time, stream: m[2] as LogStream, text: m[3] === "F" ? `${m[4]}\n` : (m[4] ?? "") });
  }
  return lines;
}

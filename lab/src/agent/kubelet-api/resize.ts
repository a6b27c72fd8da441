/**
 * The resize channel of a tty exec or attach: the client writes one JSON object per terminal size
 * ({"Width":80,"Height":24}, as client-go's encoder does, a line each); the kubelet stops at the first that does not parse.
 */
import type { Readable } from "node:stream";

export interface TerminalSize {
  width: number;
  height: number;
}

function parseSize(line: string): TerminalSize | undefined {
  try {
    const value = JSON.parse(line) as { Width?: unknown; Height?: unknown };
    if (typeof value.Width === "number" && typeof value.Height === "number") {
      return { width: value.Width, height: value.Height };
    }
  } catch {}
  return undefined;
}

/**
 * Listens to a resize stream and returns the StreamIO.onResize to hand the runner. The latest size is kept, so a
 * listener registered after the first resize still learns the terminal's size.
 */
export function resizeEvents(stream: Readable | undefined): (listener: (size: TerminalSize) => void) => void {
  const listeners: ((size: TerminalSize) => void)[] = [];
  let latest: TerminalSize | undefined;
  let pending = "";
  let broken = false;
  stream?.on("data", (chunk: Buffer) => {
    if (broken) return;
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines.filter((l) => l.trim() !== "")) {
      const size = parseSize(line);
      if (!size) {
        broken = true;
        return;
      }
      latest = size;
      for (const listener of listeners) listener(size);
    }
  });
  return (listener) => {
    listeners.push(listener);
    if (latest) listener(latest);
  };
}

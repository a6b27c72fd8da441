import { parseApiJson } from "./decode.js";

/**
 * Splits a byte stream into parsed JSON values, one per line, decoded as API
 * objects (null fields read as absent). Watch streams are newline-delimited
 * JSON, and a line may arrive split across chunks.
 */
export async function* ndjson(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of chunks) {
    pending += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield parseApiJson(line);
      newline = pending.indexOf("\n");
    }
  }
  pending += decoder.decode();
  if (pending.trim()) yield parseApiJson(pending);
}

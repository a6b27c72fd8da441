/** Cuts a byte stream into whole SPDY frames, holding partial ones until the rest arrives. */
import { frameLengthAt } from "./frames.js";

export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** Adds bytes and returns every frame they complete, each exactly one frame long. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      const head = this.peek(8);
      const length = head && frameLengthAt(head);
      if (length === undefined || this.buffered < length) return frames;
      frames.push(this.take(length));
    }
  }

  /** Concatenates only when a frame header straddles chunks, so large DATA frames are copied once. */
  private peek(bytes: number): Buffer | undefined {
    if (this.buffered < bytes) return undefined;
    const first = this.chunks[0];
    if (first && first.length >= bytes) return first;
    this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0];
  }

  private take(bytes: number): Buffer {
    const all =
      this.chunks.length === 1 && this.chunks[0] ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    const frame = all.subarray(0, bytes);
    const rest = all.subarray(bytes);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return frame;
  }
}

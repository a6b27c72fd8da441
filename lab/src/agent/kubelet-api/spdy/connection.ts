/**
 * The server side of one SPDY/3.1 connection over an upgraded socket. It accepts the streams the client opens
 * (SYN_STREAM, answered with SYN_REPLY or refused with RST_STREAM), carries their DATA within the flow-control
 * windows, answers PING, and ends with GOAWAY. A peer that breaks the protocol gets GOAWAY(PROTOCOL_ERROR) and a
 * closed socket; nothing it sends can throw out of here.
 */
import type { Duplex } from "node:stream";
import { SendWindows } from "./flow-control.js";
import { FrameReader } from "./frame-reader.js";
import {
  decodeFrame,
  encodeFrame,
  flagFin,
  goAwayStatus,
  rstStatus,
  type SpdyFrame,
  SpdyProtocolError,
  settingId,
} from "./frames.js";
import type { SpdyHeaders } from "./header-block.js";
import { HeaderCompressor, HeaderDecompressor } from "./header-compression.js";
import { SpdyStream } from "./stream.js";

export interface SpdyConnectionOptions {
  /** Vets a new stream's headers: a message refuses it (RST_STREAM REFUSED_STREAM), undefined accepts it. */
  acceptStream?: (headers: SpdyHeaders) => string | undefined;
  /** Gets each accepted stream once its SYN_REPLY is on the wire, so writing to it at once is safe. */
  onStream: (stream: SpdyStream) => void;
  /** How long an empty send window waits for a first WINDOW_UPDATE (see flow-control.ts). */
  flowControlGraceMs?: number;
}

/** DATA frames are cut to this size so one large write does not hold up the other streams. */
const maxDataChunk = 32 * 1024;
/** Received bytes are acknowledged with WINDOW_UPDATE once this many have piled up. */
const windowUpdateThreshold = 32 * 1024;
/** After our GOAWAY and FIN are written, how long the peer has to close its side before the socket is destroyed. */
const peerCloseGraceMs = 5000;

export class SpdyConnection {
  /** Settles when the socket is gone: undefined for a clean end, the error that ended it otherwise. */
  readonly closed: Promise<Error | undefined>;
  private settleClosed!: (err: Error | undefined) => void;
  private readonly streams = new Map<number, SpdyStream>();
  private readonly reader = new FrameReader();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private readonly windows: SendWindows;
  private readonly unacknowledged = new Map<number, number>();
  private frameQueue: Promise<void> = Promise.resolve();
  private lastStreamId = 0;
  private ending = false;
  private failure: Error | undefined;

  constructor(
    private readonly socket: Duplex,
    head: Buffer,
    private readonly options: SpdyConnectionOptions,
  ) {
    this.windows = new SendWindows(options.flowControlGraceMs ?? 250);
    this.closed = new Promise((resolve) => {
      this.settleClosed = resolve;
    });
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", (err) => this.teardown(err));
    socket.on("close", () => this.teardown(undefined));
    socket.on("end", () => this.close());
    if (head.length > 0) this.receive(head);
  }

  /** Ends the connection cleanly: GOAWAY, then the socket's FIN once everything queued has been written. */
  close(): void {
    if (this.ending) return;
    this.writeFrame({ type: "goAway", lastGoodStreamId: this.lastStreamId, status: goAwayStatus.ok });
    this.endSocket();
  }

  /** Half-closes the socket; a peer that has not closed its side soon after everything was written is cut off. */
  private endSocket(): void {
    this.ending = true;
    this.socket.once("finish", () => setTimeout(() => this.socket.destroy(), peerCloseGraceMs).unref());
    this.socket.end();
  }

  private receive(chunk: Buffer): void {
    if (this.failure) return;
    for (const bytes of this.reader.push(chunk)) {
      // Header blocks inflate asynchronously, yet their zlib context demands arrival order: queue every frame.
      this.frameQueue = this.frameQueue
        .then(() => (this.failure ? undefined : this.handleFrame(bytes)))
        .catch((err: Error) => this.fail(err));
    }
  }

  private async handleFrame(bytes: Buffer): Promise<void> {
    const frame = decodeFrame(bytes);
    if (!frame) return;
    switch (frame.type) {
      case "synStream":
        return this.openStream(frame);
      case "synReply":
      case "headers": {
        // Nothing here needs these headers, but they must be inflated to keep the zlib context in step.
        await this.decompressor.decompress(frame.headerBlock);
        if (frame.flags & flagFin) this.streams.get(frame.streamId)?.receiveFin();
        return;
      }
      case "data":
        return this.receiveData(frame);
      case "rstStream":
        this.streams.get(frame.streamId)?.receiveReset();
        return;
      case "settings":
        for (const entry of frame.entries) {
          if (entry.id === settingId.initialWindowSize) this.windows.setInitialStreamWindow(entry.value);
        }
        return;
      case "ping":
        // Odd ids are the client's pings; even ones would be answers to ours, and we send none.
        if (frame.id % 2 === 1) this.writeFrame(frame);
        return;
      case "goAway":
        // The client opens nothing more; the streams it has keep going until it closes the socket.
        return;
      case "windowUpdate":
        this.windows.grant(frame.streamId, frame.delta);
        return;
    }
  }

  private async openStream(frame: Extract<SpdyFrame, { type: "synStream" }>): Promise<void> {
    // Inflate first, whatever happens to the stream: skipping a block would desynchronise every later one.
    const headers = await this.decompressor.decompress(frame.headerBlock);
    if (frame.streamId % 2 === 0 || frame.streamId <= this.lastStreamId) {
      throw new SpdyProtocolError(`client opened stream ${frame.streamId} after ${this.lastStreamId}`);
    }
    this.lastStreamId = frame.streamId;
    const refusal = this.ending ? "connection is closing" : this.options.acceptStream?.(headers);
    if (refusal !== undefined) {
      this.writeFrame({ type: "rstStream", streamId: frame.streamId, status: rstStatus.refusedStream });
      return;
    }
    const stream = new SpdyStream(frame.streamId, headers, {
      sendData: (id, data, fin) => this.sendData(id, data, fin),
      reset: (id, status) => this.writeFrame({ type: "rstStream", streamId: id, status }),
      release: (id) => this.release(id),
    });
    stream.on("error", () => {}); // a stream's failure ends that stream, never the agent
    this.streams.set(stream.id, stream);
    this.windows.open(stream.id);
    const replyBlock = await this.compressor.compress(new Map());
    this.writeFrame({ type: "synReply", streamId: stream.id, flags: 0, headerBlock: replyBlock });
    this.options.onStream(stream);
    if (frame.flags & flagFin) stream.receiveFin();
  }

  private receiveData(frame: Extract<SpdyFrame, { type: "data" }>): void {
    const stream = this.streams.get(frame.streamId);
    if (!stream || stream.remoteClosed) {
      this.writeFrame({ type: "rstStream", streamId: frame.streamId, status: rstStatus.invalidStream });
      return;
    }
    stream.receiveData(frame.data);
    this.acknowledge(stream.id, frame.data.length);
    this.acknowledge(0, frame.data.length);
    if (frame.flags & flagFin) stream.receiveFin();
  }

  /** Reopens the peer's send windows (per stream, and stream 0 for the connection) as its data arrives. */
  private acknowledge(streamId: number, bytes: number): void {
    const pending = (this.unacknowledged.get(streamId) ?? 0) + bytes;
    if (pending < windowUpdateThreshold) {
      this.unacknowledged.set(streamId, pending);
      return;
    }
    this.unacknowledged.delete(streamId);
    this.writeFrame({ type: "windowUpdate", streamId, delta: pending });
  }

  private async sendData(streamId: number, data: Buffer, fin: boolean): Promise<void> {
    let rest = data;
    do {
      if (this.failure || this.ending)
        throw new Error(`SPDY connection closed; stream ${streamId} cannot send`);
      const size = this.windows.allowance(streamId, Math.min(rest.length, maxDataChunk));
      if (size === 0 && rest.length > 0) {
        await this.windows.waitForWindow();
        continue;
      }
      this.windows.spend(streamId, size);
      const last = size === rest.length;
      const flags = fin && last ? flagFin : 0;
      const flushed = this.writeFrame({ type: "data", streamId, flags, data: rest.subarray(0, size) });
      rest = rest.subarray(size);
      if (!flushed) await this.drained();
    } while (rest.length > 0);
  }

  /** Writes one frame; false when the socket's buffer is full and the writer should wait for drained(). */
  private writeFrame(frame: SpdyFrame): boolean {
    if (this.ending || this.socket.destroyed) return true;
    return this.socket.write(encodeFrame(frame));
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off("drain", done);
        this.socket.off("close", done);
        resolve();
      };
      this.socket.on("drain", done);
      this.socket.on("close", done);
    });
  }

  private release(streamId: number): void {
    this.streams.delete(streamId);
    this.windows.forget(streamId);
    this.unacknowledged.delete(streamId);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const status = err instanceof SpdyProtocolError ? goAwayStatus.protocolError : goAwayStatus.internalError;
    this.writeFrame({ type: "goAway", lastGoodStreamId: this.lastStreamId, status });
    this.endSocket();
    this.teardown(err);
  }

  private teardown(err: Error | undefined): void {
    for (const stream of [...this.streams.values()]) stream.receiveReset();
    this.streams.clear();
    this.windows.close();
    if (this.socket.destroyed) {
      this.compressor.close();
      this.decompressor.close();
    }
    this.settleClosed(this.failure ?? err);
  }
}

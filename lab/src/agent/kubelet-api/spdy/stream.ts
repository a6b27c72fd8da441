/**
 * One client-initiated SPDY stream as a Node Duplex: what the client sends comes out of the readable side, what is
 * written goes back as DATA frames, and end() sends the FIN that half-closes our side. The connection does the
 * framing; a stream only knows its id, its headers and the three things it may ask of the connection.
 */
import { Duplex } from "node:stream";
import type { SpdyHeaders } from "./header-block.js";
import { headerValue } from "./header-block.js";

/** What a stream needs from its connection. */
export interface StreamLink {
  /** Sends data as DATA frames within the flow-control windows; fin half-closes our side after it. */
  sendData(streamId: number, data: Buffer, fin: boolean): Promise<void>;
  /** Abandons the stream with RST_STREAM. */
  reset(streamId: number, status: number): void;
  /** The stream is finished both ways, or reset: the connection may forget it. */
  release(streamId: number): void;
}

const cancelStatus = 5;

export class SpdyStream extends Duplex {
  private finSent = false;
  private finReceived = false;
  private wasReset = false;

  constructor(
    readonly id: number,
    readonly headers: SpdyHeaders,
    private readonly link: StreamLink,
  ) {
    super({ allowHalfOpen: true });
  }

  /** The first value of a request header, e.g. header("streamType"). */
  header(name: string): string | undefined {
    return headerValue(this.headers, name);
  }

  override _read(): void {
    // Data is pushed as frames arrive; the peer's windows are reopened as it comes (see connection.ts).
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.wasReset) {
      done(new Error(`SPDY stream ${this.id} was reset by the peer`));
      return;
    }
    this.link.sendData(this.id, chunk, false).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.wasReset) {
      done();
      return;
    }
    this.finSent = true;
    this.link.sendData(this.id, Buffer.alloc(0), true).then(() => {
      this.releaseIfDone();
      done();
    }, done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // Destroyed before both sides closed cleanly: tell the peer to stop, so neither side waits on the other.
    if (!this.wasReset && !(this.finSent && this.finReceived)) this.link.reset(this.id, cancelStatus);
    this.link.release(this.id);
    done(err);
  }

  /** The connection delivers the payload of a DATA frame. */
  receiveData(data: Buffer): void {
    if (!this.finReceived && data.length > 0) this.push(data);
  }

  /** The peer's FIN: it sends nothing more. */
  receiveFin(): void {
    if (this.finReceived) return;
    this.finReceived = true;
    this.push(null);
    this.releaseIfDone();
  }

  /** RST_STREAM from the peer, or the connection going away: end both sides without sending anything. */
  receiveReset(): void {
    this.wasReset = true;
    this.finReceived = true;
    this.push(null);
    this.destroy();
  }

  get remoteClosed(): boolean {
    return this.finReceived;
  }

  private releaseIfDone(): void {
    if (this.finSent && this.finReceived) this.link.release(this.id);
  }
}

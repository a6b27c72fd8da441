/**
 * SPDY/3.1 frames as values, and their wire form (draft-mbelshe-httpbis-spdy-00 section 2.2, plus 3.1's
 * connection-level WINDOW_UPDATE on stream 0). Header blocks stay compressed here: their zlib context belongs to
 * the connection (see header-compression.ts), so encoding and decoding a frame never depends on earlier frames.
 */

export const spdyVersion = 3;

export const frameType = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;

export const flagFin = 0x01;
/** SYN_STREAM only: the sender will not receive on this stream. */
export const flagUnidirectional = 0x02;

export const rstStatus = {
  protocolError: 1,
  invalidStream: 2,
  refusedStream: 3,
  unsupportedVersion: 4,
  cancel: 5,
  internalError: 6,
  flowControlError: 7,
  streamInUse: 8,
  streamAlreadyClosed: 9,
  frameTooLarge: 11,
} as const;

export const goAwayStatus = { ok: 0, protocolError: 1, internalError: 2 } as const;

export const settingId = { initialWindowSize: 7 } as const;

/** Every frame starts with 8 bytes: control bit, version or stream id, flags and a 24-bit length. */
export const frameHeaderLength = 8;
export const maxFrameLength = 0xffffff;

export type SpdyFrame =
  | { type: "data"; streamId: number; flags: number; data: Buffer }
  | {
      type: "synStream";
      streamId: number;
      associatedStreamId: number;
      priority: number;
      flags: number;
      headerBlock: Buffer;
    }
  | { type: "synReply"; streamId: number; flags: number; headerBlock: Buffer }
  | { type: "headers"; streamId: number; flags: number; headerBlock: Buffer }
  | { type: "rstStream"; streamId: number; status: number }
  | { type: "settings"; flags: number; entries: SettingEntry[] }
  | { type: "ping"; id: number }
  | { type: "goAway"; lastGoodStreamId: number; status: number }
  | { type: "windowUpdate"; streamId: number; delta: number };

export interface SettingEntry {
  flags: number;
  id: number;
  value: number;
}

/** A frame the peer got wrong: the connection answers with GOAWAY (protocol error) and closes. */
export class SpdyProtocolError extends Error {
  override name = "SpdyProtocolError";
}

const streamIdMask = 0x7fffffff;

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > maxFrameLength) throw new RangeError(`SPDY frame payload of ${payload.length} bytes`);
  const header = Buffer.alloc(frameHeaderLength);
  header.writeUInt16BE(0x8000 | spdyVersion, 0);
  header.writeUInt16BE(type, 2);
  header.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([header, payload]);
}

function uint32s(...values: number[]): Buffer {
  const buf = Buffer.alloc(4 * values.length);
  for (const [i, value] of values.entries()) buf.writeUInt32BE(value >>> 0, 4 * i);
  return buf;
}

/** The wire bytes of one frame. */
export function encodeFrame(frame: SpdyFrame): Buffer {
  switch (frame.type) {
    case "data": {
      if (frame.data.length > maxFrameLength) throw new RangeError(`SPDY DATA of ${frame.data.length} bytes`);
      const header = uint32s(frame.streamId & streamIdMask, ((frame.flags & 0xff) << 24) | frame.data.length);
      return Buffer.concat([header, frame.data]);
    }
    case "synStream": {
      const ids = uint32s(frame.streamId & streamIdMask, frame.associatedStreamId & streamIdMask);
      const priority = Buffer.from([(frame.priority & 0x07) << 5, 0]);
      return controlFrame(
        frameType.synStream,
        frame.flags,
        Buffer.concat([ids, priority, frame.headerBlock]),
      );
    }
    case "synReply":
    case "headers": {
      const payload = Buffer.concat([uint32s(frame.streamId & streamIdMask), frame.headerBlock]);
      return controlFrame(frameType[frame.type], frame.flags, payload);
    }
    case "rstStream":
      return controlFrame(frameType.rstStream, 0, uint32s(frame.streamId & streamIdMask, frame.status));
    case "settings": {
      const entries = frame.entries.map((e) =>
        uint32s(((e.flags & 0xff) << 24) | (e.id & 0xffffff), e.value),
      );
      return controlFrame(
        frameType.settings,
        frame.flags,
        Buffer.concat([uint32s(entries.length), ...entries]),
      );
    }
    case "ping":
      return controlFrame(frameType.ping, 0, uint32s(frame.id));
    case "goAway":
      return controlFrame(frameType.goAway, 0, uint32s(frame.lastGoodStreamId & streamIdMask, frame.status));
    case "windowUpdate":
      return controlFrame(
        frameType.windowUpdate,
        0,
        uint32s(frame.streamId & streamIdMask, frame.delta & streamIdMask),
      );
  }
}

/** The total length of the frame at the start of buf, or undefined while its header is incomplete. */
export function frameLengthAt(buf: Buffer): number | undefined {
  if (buf.length < frameHeaderLength) return undefined;
  return frameHeaderLength + (buf.readUInt32BE(4) & 0xffffff);
}

/**
 * Parses one complete frame (exactly frameLengthAt bytes). Unknown control frame types come back as undefined,
 * since the spec says to ignore them; malformed known ones throw SpdyProtocolError.
 */
export function decodeFrame(buf: Buffer): SpdyFrame | undefined {
  const flags = buf.readUInt8(4);
  const payload = buf.subarray(frameHeaderLength);
  if ((buf.readUInt8(0) & 0x80) === 0) {
    return { type: "data", streamId: buf.readUInt32BE(0) & streamIdMask, flags, data: payload };
  }
  const version = buf.readUInt16BE(0) & 0x7fff;
  if (version !== spdyVersion)
    throw new SpdyProtocolError(`SPDY version ${version}, only ${spdyVersion} is spoken`);
  return decodeControlPayload(buf.readUInt16BE(2), flags, payload);
}

function need(payload: Buffer, bytes: number, what: string): void {
  if (payload.length < bytes) {
    throw new SpdyProtocolError(`${what} frame of ${payload.length} bytes, needs at least ${bytes}`);
  }
}

function decodeControlPayload(type: number, flags: number, payload: Buffer): SpdyFrame | undefined {
  const word = (offset: number) => payload.readUInt32BE(offset);
  switch (type) {
    case frameType.synStream:
      need(payload, 10, "SYN_STREAM");
      return {
        type: "synStream",
        streamId: word(0) & streamIdMask,
        associatedStreamId: word(4) & streamIdMask,
        priority: payload.readUInt8(8) >> 5,
        flags,
        headerBlock: payload.subarray(10),
      };
    case frameType.synReply:
    case frameType.headers:
      need(payload, 4, type === frameType.synReply ? "SYN_REPLY" : "HEADERS");
      return {
        type: type === frameType.synReply ? "synReply" : "headers",
        streamId: word(0) & streamIdMask,
        flags,
        headerBlock: payload.subarray(4),
      };
    case frameType.rstStream:
      need(payload, 8, "RST_STREAM");
      return { type: "rstStream", streamId: word(0) & streamIdMask, status: word(4) };
    case frameType.settings:
      return decodeSettings(flags, payload);
    case frameType.ping:
      need(payload, 4, "PING");
      return { type: "ping", id: word(0) };
    case frameType.goAway:
      // SPDY/3 added the status word; tolerate its absence as the GOAWAY of earlier drafts.
      need(payload, 4, "GOAWAY");
      return {
        type: "goAway",
        lastGoodStreamId: word(0) & streamIdMask,
        status: payload.length >= 8 ? word(4) : 0,
      };
    case frameType.windowUpdate:
      need(payload, 8, "WINDOW_UPDATE");
      return { type: "windowUpdate", streamId: word(0) & streamIdMask, delta: word(4) & streamIdMask };
    default:
      return undefined;
  }
}

function decodeSettings(flags: number, payload: Buffer): SpdyFrame {
  need(payload, 4, "SETTINGS");
  const count = payload.readUInt32BE(0);
  if (payload.length !== 4 + 8 * count) {
    throw new SpdyProtocolError(`SETTINGS frame of ${payload.length} bytes cannot hold ${count} entries`);
  }
  const entries: SettingEntry[] = [];
  for (let offset = 4; offset < payload.length; offset += 8) {
    const idWord = payload.readUInt32BE(offset);
    entries.push({ flags: idWord >>> 24, id: idWord & 0xffffff, value: payload.readUInt32BE(offset + 4) });
  }
  return { type: "settings", flags, entries };
}

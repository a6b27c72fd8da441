import { encodeMessage } from "../../wire/encode.js";
import { newQuery } from "../../wire/message.js";

const NAMES = [
  "svc1.testns.svc.cluster.local.",
  "hdls.testns.svc.cluster.local.",
  "_http._tcp.svc1.testns.svc.cluster.local.",
  "10.0.30.172.in-addr.arpa.",
  "dns-version.cluster.local.",
  "1-2-3-4.testns.pod.cluster.local.",
  "cluster.local.",
  "example.org.",
];
const TYPES = [1, 28, 33, 12, 16, 6, 2, 5, 255, 252, 13];

/** Valid queries to mutate: every name with several types, some with EDNS (and the DO bit). */
export function seeds(): Buffer[] {
  const out: Buffer[] = [];
  for (const name of NAMES)
    for (const type of TYPES) {
      out.push(encodeMessage(newQuery(name, type, 4242)));
      out.push(
        encodeMessage(newQuery(name, type, 4243, { udpSize: 1232, version: 0, dnssecOk: true, options: [] })),
      );
    }
  return out;
}

type Mutation = (rnd: () => number, b: Buffer) => Buffer;

const int = (rnd: () => number, n: number) => Math.floor(rnd() * n);

const MUTATIONS: Mutation[] = [
  // Bit flips anywhere.
  (rnd, b) => {
    const out = Buffer.from(b);
    for (let i = 1 + int(rnd, 8); i > 0; i--) {
      const at = int(rnd, out.length);
      out[at] = (out[at] ?? 0) ^ (1 << int(rnd, 8));
    }
    return out;
  },
  // Truncation at any point.
  (rnd, b) => b.subarray(0, int(rnd, b.length)),
  // Random junk appended.
  (rnd, b) => Buffer.concat([b, randomBytes(rnd, 1 + int(rnd, 64))]),
  // Pure noise of any length up to a large UDP packet.
  (rnd) => randomBytes(rnd, int(rnd, 1500)),
  // A name that points at itself, or two pointers pointing at each other.
  (rnd, b) => {
    const out = Buffer.from(b);
    if (out.length < 16) return out;
    if (rnd() < 0.5) {
      out[12] = 0xc0;
      out[13] = 12;
    } else {
      out[12] = 0xc0;
      out[13] = 14;
      out[14] = 0xc0;
      out[15] = 12;
    }
    return out;
  },
  // Huge section counts.
  (rnd, b) => {
    const out = Buffer.from(b);
    if (out.length >= 12) out.writeUInt16BE(rnd() < 0.5 ? 0xffff : int(rnd, 0x10000), 4 + 2 * int(rnd, 4));
    return out;
  },
  // Label lengths beyond 63 (the reserved 0x40/0x80 label types) and beyond the packet.
  (rnd, b) => {
    const out = Buffer.from(b);
    if (out.length > 12) out[12] = 64 + int(rnd, 128);
    return out;
  },
  // Random header flags and opcode: QR set, NOTIFY, UPDATE, reserved opcodes, rcodes.
  (rnd, b) => {
    const out = Buffer.from(b);
    if (out.length >= 4) {
      out[2] = int(rnd, 256);
      out[3] = int(rnd, 256);
    }
    return out;
  },
  // An OPT record whose RDLENGTH lies, or an EDNS version above 0.
  (rnd, b) => {
    const out = Buffer.from(b);
    const opt = out.lastIndexOf(Buffer.from([0, 0, 41]));
    if (opt < 0) return out;
    if (rnd() < 0.5 && opt + 11 <= out.length) out.writeUInt16BE(int(rnd, 0x10000), opt + 9);
    else if (opt + 6 < out.length) out[opt + 6] = 1 + int(rnd, 255);
    return out;
  },
];

function randomBytes(rnd: () => number, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = int(rnd, 256);
  return out;
}

/** One fuzz packet: a seed put through one to three mutations. */
export function mutant(rnd: () => number, bases: readonly Buffer[]): Buffer {
  let b = bases[int(rnd, bases.length)] as Buffer;
  for (let i = 1 + int(rnd, 3); i > 0; i--) b = (MUTATIONS[int(rnd, MUTATIONS.length)] as Mutation)(rnd, b);
  return b.length > 65535 ? b.subarray(0, 65535) : b;
}

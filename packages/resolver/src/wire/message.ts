/**
 * The in-memory shape of a DNS message. Names are absolute presentation names (see name.ts); types are
 * mnemonics, with RFC 3597 `TYPE<n>` for those this package keeps as opaque bytes.
 */

export interface Header {
  id: number;
  /** true for a response */
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  /** the reserved Z bit; replies always clear it */
  z: boolean;
  ad: boolean;
  cd: boolean;
  /** The full rcode: the low 4 bits travel in the header, the rest in the OPT record. */
  rcode: number;
}

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface Soa {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

export interface Srv {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

export interface Mx {
  preference: number;
  exchange: string;
}

interface RecordOf<T extends string, D> {
  name: string;
  type: T;
  class: number;
  ttl: number;
  data: D;
}

export type ResourceRecord =
  | RecordOf<"A" | "AAAA", string>
  | RecordOf<"CNAME" | "PTR" | "NS" | "DNAME", string>
  | RecordOf<"SOA", Soa>
  | RecordOf<"SRV", Srv>
  | RecordOf<"MX", Mx>
  /** TXT character-strings, raw bytes (they need not be UTF-8). */
  | RecordOf<"TXT", Buffer[]>
  /** Any other type, rdata kept exactly as received. */
  | RecordOf<`TYPE${number}`, Buffer>;

export interface EdnsOption {
  code: number;
  data: Buffer;
}

/** The OPT pseudo-record, kept apart from the additional section. */
export interface Edns {
  udpSize: number;
  version: number;
  dnssecOk: boolean;
  options: EdnsOption[];
  /**
   * Set on an OPT a plugin made itself (miekg's SetEdns0) that goes out as it is when the client sent none:
   * upstream's reply shaping only rewrites a reply's OPT when the query had one, and never removes it.
   */
  keep?: boolean;
}

export interface Message extends Header {
  question: Question[];
  answer: ResourceRecord[];
  authority: ResourceRecord[];
  additional: ResourceRecord[];
  edns?: Edns;
}

export function emptyHeader(id = 0): Header {
  return {
    id,
    qr: false,
    opcode: 0,
    aa: false,
    tc: false,
    rd: false,
    ra: false,
    z: false,
    ad: false,
    cd: false,
    rcode: 0,
  };
}

/** A query for one name and type, as a client would send it. */
export function newQuery(name: string, type: number, id = 0, edns?: Edns): Message {
  const msg: Message = {
    ...emptyHeader(id),
    rd: true,
    question: [{ name, type, class: 1 }],
    answer: [],
    authority: [],
    additional: [],
  };
  if (edns) msg.edns = edns;
  return msg;
}

/**
 * A reply skeleton for `request`: same id, opcode, RD, CD and question (kept byte for byte, which is what
 * makes 0x20 case randomisation work), no records, no EDNS (the server adds its own OPT on the way out).
 */
export function replyTo(request: Message, rcode = 0): Message {
  return {
    ...emptyHeader(request.id),
    qr: true,
    opcode: request.opcode,
    rd: request.rd,
    cd: request.cd,
    rcode,
    question: request.question.map((q) => ({ ...q })),
    answer: [],
    authority: [],
    additional: [],
  };
}

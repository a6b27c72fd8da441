import { ClassIN, Opcode, Rcode } from "../wire/constants.js";
import { decodeMessage } from "../wire/decode.js";
import { badVersionReply } from "../wire/edns.js";
import type { Header, Message, Question } from "../wire/message.js";

/**
 * What to do with an incoming packet before any plugin sees it, in the order miekg/dns and CoreDNS check:
 * unreadable header or a response → drop (a reply to garbage only helps amplification); an opcode other
 * than QUERY/NOTIFY → NOTIMP; section counts a query cannot have → FORMERR; a body that does not parse →
 * FORMERR; a class other than IN → REFUSED, unless `anyClass` (CoreDNS opens a server to CH and other classes when
 * one of its blocks has `forward` or `chaos`); EDNS version above 0 → BADVERS.
 */
export type Verdict =
  | { action: "drop"; reason: string }
  | { action: "reply"; reply: Message; reason: string }
  | { action: "serve"; request: Message };

export function classify(packet: Buffer, anyClass = false): Verdict {
  const decoded = decodeMessage(packet);
  if (decoded.kind === "unreadable") return { action: "drop", reason: decoded.reason };
  const header = decoded.kind === "message" ? decoded.message : decoded.header;
  if (header.qr) return { action: "drop", reason: "packet is a response" };

  if (header.opcode !== Opcode.QUERY && header.opcode !== Opcode.NOTIFY) {
    return reject(header, Rcode.NOTIMP, `opcode ${header.opcode} is not implemented`);
  }
  const { counts } = decoded;
  if (counts.qd !== 1 || counts.an > 1 || counts.ns > 1 || counts.ar > 2) {
    return reject(
      header,
      Rcode.FORMERR,
      `section counts ${counts.qd}/${counts.an}/${counts.ns}/${counts.ar}`,
    );
  }
  if (decoded.kind === "malformed") {
    return reject(header, Rcode.FORMERR, decoded.reason, decoded.question);
  }
  const request = decoded.message;
  const q = request.question[0] as Question;
  if (q.class !== ClassIN && !anyClass) {
    return { action: "reply", reply: errorReply(request, Rcode.REFUSED), reason: `class ${q.class} refused` };
  }
  const badvers = badVersionReply(request);
  if (badvers) return { action: "reply", reply: badvers, reason: `EDNS version ${request.edns?.version}` };
  return { action: "serve", request };
}

/** The reply CoreDNS writes when the chain returns an rcode without writing: question echoed, nothing else. */
export function errorReply(request: Message, rcode: number): Message {
  return {
    id: request.id,
    qr: true,
    opcode: request.opcode,
    aa: false,
    tc: false,
    rd: request.rd,
    ra: false,
    z: false,
    ad: false,
    cd: request.cd,
    rcode,
    question: request.question.map((q) => ({ ...q })),
    answer: [],
    authority: [],
    additional: [],
  };
}

/**
 * miekg/dns rejects from the header alone: the reply is the header turned around with no sections (the
 * question too, unless it was read), AA and Z cleared, opcode QUERY for FORMERR and kept for NOTIMP.
 */
function reject(header: Header, rcode: number, reason: string, question?: Question): Verdict {
  const reply: Message = {
    id: header.id,
    tc: header.tc,
    rd: header.rd,
    ra: header.ra,
    ad: header.ad,
    cd: header.cd,
    qr: true,
    aa: false,
    z: false,
    opcode: rcode === Rcode.NOTIMP ? header.opcode : Opcode.QUERY,
    rcode,
    question: question ? [{ ...question }] : [],
    answer: [],
    authority: [],
    additional: [],
  };
  return { action: "reply", reply, reason };
}

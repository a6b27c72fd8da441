import type { Handler, Peer, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { refuseArgs } from "../../plugin/no-args.js";
import type { Setup } from "../../plugin/setup.js";
import type { Message, ResourceRecord } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";

/**
 * `whoami`: answers every query, whatever its type, with an empty answer section and the asker in the additional
 * one: its address as an A or AAAA record and its port and transport as `_<transport>.<qname> SRV 0 0 <port> .`,
 * TTL 0, authoritative. CoreDNS loads it (with `log`) when it finds no Corefile, so it is what a bare start answers.
 */
export class WhoamiHandler implements Handler {
  readonly name = "whoami";

  async serveDNS(_ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const reply = replyTo(r);
    reply.aa = true;
    const q = r.question[0];
    if (q) reply.additional = whoamiRecords(q.name, q.class, w.remote, w.transport);
    w.write(reply);
    return { rcode: 0 };
  }
}

/** The two records, named as the question was spelled (CoreDNS v1.14.7 keeps its case; the differential test checks). */
export function whoamiRecords(
  qname: string,
  qclass: number,
  peer: Peer,
  transport: string,
): ResourceRecord[] {
  // An IPv4 client reached over an IPv6 socket is still family 1 (Go's To4 accepts the mapped form).
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer.address)?.[1];
  const address = v4 ?? peer.address;
  const isV4 = v4 !== undefined || peer.family === "IPv4";
  const srvName = qname === "." ? `_${transport}.` : `_${transport}.${qname}`;
  return [
    { name: qname, type: isV4 ? "A" : "AAAA", class: qclass, ttl: 0, data: address },
    {
      name: srvName,
      type: "SRV",
      class: qclass,
      ttl: 0,
      data: { priority: 0, weight: 0, port: peer.port, target: "." },
    },
  ];
}

/** `whoami`, without arguments; CoreDNS takes it more than once in a block (the first answers), and so do we. */
export const setupWhoami: Setup = (ctx) => {
  for (const stanza of ctx.stanzas) refuseArgs(stanza, "whoami");
  return { plugin: () => new WhoamiHandler() };
};

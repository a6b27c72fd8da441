import type { Message } from "../../wire/message.js";

/** The EDNS0 option code of an Extended DNS Error (RFC 8914). */
const EDE_OPTION = 15;
/** miekg's SetEdns0(4096, true) for replies that carry an Extended DNS Error. */
const EDE_UDP_SIZE = 4096;

/**
 * The OPT that carries an Extended DNS Error, as upstream's acl and template add it with SetEdns0(4096, true).
 * CoreDNS's reply shaping then takes the client's buffer size but its "clear flags" mask leaves the DO bit
 * standing, so such replies say DO whatever the client asked; setting it here makes the server's OPT say the
 * same. A client without EDNS gets this OPT as it is.
 */
export function edeOpt(ede: { code: number; reason: string }): NonNullable<Message["edns"]> {
  const text = Buffer.from(ede.reason, "utf8");
  const data = Buffer.alloc(2 + text.length);
  data.writeUInt16BE(ede.code, 0);
  text.copy(data, 2);
  return {
    udpSize: EDE_UDP_SIZE,
    version: 0,
    dnssecOk: true,
    options: [{ code: EDE_OPTION, data }],
    keep: true,
  };
}

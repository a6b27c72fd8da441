import dgram from "node:dgram";
import type { Message } from "@switchyard/resolver";
import { decodeMessage, encodeMessage } from "@switchyard/resolver";

/**
 * A UDP upstream for `forward` that answers each query with whatever `answer` builds from it (undefined:
 * no reply). Both servers under test forward to the same one, so they see the same upstream replies.
 */
export async function scriptedUpstream(
  answer: (query: Message) => Message | undefined,
): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (packet, rinfo) => {
    const decoded = decodeMessage(packet);
    if (decoded.kind !== "message") return;
    const reply = answer(decoded.message);
    if (reply) sock.send(encodeMessage(reply), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  return { port: sock.address().port, close: () => sock.close() };
}

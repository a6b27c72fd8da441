/**
 * The lab's stand-in for a node's upstream resolver (what `dnsPolicy: Default` pods, CoreDNS among them, find in
 * the node's resolv.conf). No lab traffic may leave the lab, so it knows no names: every query (UDP or TCP) gets
 * REFUSED at once. A real answer matters: CoreDNS's `forward` and `loop` plugins see a working path that ends elsewhere,
 * rather than timeouts. Usage: upstream-dns --address IP [--port 53]
 */
import { createSocket } from "node:dgram";
import { createServer, isIPv6 } from "node:net";
import { parseArgs } from "node:util";
import { refusedAnswer } from "./dns-refused.js";

const { values } = parseArgs({
  options: { address: { type: "string" }, port: { type: "string", default: "53" } },
});
if (!values.address) throw new Error("usage: upstream-dns --address IP [--port 53]");
const socket = createSocket(isIPv6(values.address) ? "udp6" : "udp4");
socket.on("message", (query, peer) => {
  const answer = refusedAnswer(query);
  if (answer) socket.send(answer, peer.port, peer.address);
});
socket.bind(Number(values.port), values.address);

// TCP: each message framed by a two-byte length.
createServer((conn) => {
  let buffered = Buffer.alloc(0);
  conn.on("error", () => {});
  conn.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
      const query = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
      buffered = buffered.subarray(2 + query.length);
      const answer = refusedAnswer(query);
      if (!answer) {
        conn.destroy();
        return;
      }
      const length = Buffer.alloc(2);
      length.writeUInt16BE(answer.length);
      conn.write(Buffer.concat([length, answer]));
    }
  });
}).listen(Number(values.port), values.address);
process.on("SIGTERM", () => process.exit(0));

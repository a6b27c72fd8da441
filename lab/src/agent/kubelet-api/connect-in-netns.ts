import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import type { PortConnector } from "./streams.js";

/**
 * Run inside the pod's namespace: connects to 127.0.0.1:port and hands the connected socket to the agent over
 * the IPC channel, then exits. The socket is paused before it connects, so nothing the server says first (a
 * greeting, a whole answer) is read here and lost: the agent reads it all.
 */
const connectAndHandOver = `
const net = require("node:net");
const socket = net.connect({ host: "127.0.0.1", port: Number(process.argv[1]) });
socket.pause();
socket.on("error", (err) => process.send({ error: err.message }, () => process.exit(1)));
socket.on("connect", () => process.send("connected", socket, () => process.exit(0)));
`;

/**
 * Port forwarding's connections to the pod's loopback, from the agent in the host namespace (a socket belongs
 * to the namespace it was made in, as in netns-listener.ts). One short-lived `ip netns exec` child per
 * forwarded connection: dearer than a resident helper, but nothing to keep alive or clean up.
 */
export function connectInNetns(netns: string): PortConnector {
  return (port) =>
    new Promise((resolve, reject) => {
      const child = spawn(
        "ip",
        ["netns", "exec", netns, process.execPath, "-e", connectAndHandOver, String(port)],
        {
          stdio: ["ignore", "ignore", "pipe", "ipc"],
        },
      );
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const fail = (why: string) =>
        reject(new Error(`failed to connect to localhost:${port} inside namespace ${netns}: ${why}`));
      child.on("error", (err) => fail(`cannot run ip netns exec: ${err.message}`));
      child.on("message", (message: unknown, handle: unknown) => {
        // Unread data waits in the socket's buffer until port-forward.ts pipes it to the client.
        if (message === "connected" && handle) resolve(handle as Socket);
        else fail((message as { error?: string }).error ?? "no socket received");
      });
      child.on("exit", (code) => fail(stderr.trim().split("\n")[0] || `exit code ${code}`));
    });
}

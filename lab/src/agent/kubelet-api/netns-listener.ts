import { spawn } from "node:child_process";
import type { Server } from "node:net";

/**
 * A tiny program run inside the node's namespace: it binds the address there and hands the listening socket to
 * the agent over Node's IPC channel (which carries file descriptors), then exits. `ip netns exec` keeps the
 * channel's descriptor open across its exec.
 */
const bindAndHandOver = `
const net = require("node:net");
const [host, port] = process.argv.slice(1);
const server = net.createServer();
server.on("error", (err) => process.send({ error: err.message }, () => process.exit(1)));
server.listen({ host, port: Number(port) }, () => process.send("listening", server, () => process.exit(0)));
`;

/**
 * Listens on `host:port` inside network namespace `netns` from a process that runs in another one (the agent
 * stays in the host namespace): a socket belongs to the namespace it was made in, wherever its owner runs. The
 * socket lives as long as the agent holds it; nothing is left behind in the namespace.
 */
export function listenInNetns(netns: string, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "ip",
      ["netns", "exec", netns, process.execPath, "-e", bindAndHandOver, host, String(port)],
      {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      },
    );
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", (err) => reject(new Error(`cannot run ip netns exec: ${err.message}`)));
    child.on("message", (message: unknown, handle: unknown) => {
      if (message === "listening" && handle) resolve(handle as Server);
      else {
        const why = (message as { error?: string }).error ?? "no socket received";
        reject(new Error(`cannot listen on ${host}:${port} in ${netns}: ${why}`));
      }
    });
    // "close", not "exit": the child exits as soon as the socket is sent, and "exit" can come before the message
    // that carries it; "close" waits for the IPC channel to be drained.
    child.on("close", (code) => {
      const why = stderr.trim().split("\n")[0] || `exit code ${code}`;
      reject(new Error(`cannot listen on ${host}:${port} in ${netns}: ${why}`));
    });
  });
}

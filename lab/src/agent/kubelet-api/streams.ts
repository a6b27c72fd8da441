/**
 * The kubelet's streaming endpoints over SPDY/3.1, for the agent's HTTPS server to call from its `upgrade` event
 * (exec, attach and portforward requests arrive as upgrades). Each handler answers the upgrade itself: 101 and a
 * SPDY session, or a 400/403 and a closed socket. Each resolves when the session is over and never rejects.
 *
 *   server.on("upgrade", (req, socket, head) => {
 *     if (isExecPath(req.url)) void handleExec(req, socket, head, (command, io) => runInContainer(command, io));
 *   });
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { exitCodeStatus, successStatus } from "./exec-status.js";
import { type PortConnector, servePortForward } from "./port-forward.js";
import { type StreamIO, type StreamingOptions, serveRemoteCommand } from "./remote-command.js";

export type { PortConnector } from "./port-forward.js";
export { portForwardProtocols } from "./port-forward.js";
export type { RemoteCommandRequest, StreamIO, StreamingOptions } from "./remote-command.js";
export {
  defaultStreamCreationTimeoutMs,
  parseRemoteCommandRequest,
  remoteCommandProtocols,
} from "./remote-command.js";
export type { TerminalSize } from "./resize.js";

/** Runs a command with the client's channels and resolves with its exit code; a rejection is an internal error. */
export type ExecRunner = (command: string[], io: StreamIO) => Promise<number>;

/** Attaches the client's channels to a running container until it or the client is done. */
export type AttachRunner = (io: StreamIO) => Promise<void>;

/**
 * Exec: the query names the command (`command`, repeated) and the channels (input/output/error/tty = 1, or
 * stdin/stdout/stderr/tty = true). Exit code 0 is reported as Success, any other as NonZeroExitCode.
 */
export function handleExec(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  run: ExecRunner,
  options?: StreamingOptions,
): Promise<void> {
  return serveRemoteCommand(
    req,
    socket,
    head,
    async (request, io) => {
      const exitCode = await run(request.command, io);
      return exitCode === 0 ? successStatus : exitCodeStatus(request.command, exitCode);
    },
    options,
  );
}

/** Attach: as exec, without a command; the outcome is Success unless the runner rejects. */
export function handleAttach(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  run: AttachRunner,
  options?: StreamingOptions,
): Promise<void> {
  return serveRemoteCommand(
    req,
    socket,
    head,
    async (_request, io) => {
      await run(io);
      return successStatus;
    },
    options,
  );
}

/** Port forward: each data/error stream pair is joined to a connection `connect` opens to the stream's port. */
export function handlePortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  connect: PortConnector,
  options?: StreamingOptions,
): Promise<void> {
  return servePortForward(req, socket, head, connect, options);
}

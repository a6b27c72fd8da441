import type { ContainerInput } from "../container-input.js";
import type { ContainerLog } from "../container-log.js";
import type { AttachRunner, StreamIO } from "./streams.js";

/**
 * Attach: the container's output from now on, as the agent records it (container-log.ts), until the running
 * instance exits or the client leaves. Each output goes to the client's stream of that name (to the other one
 * when the client asked for only one); a tty's output is the terminal's, all on stdout. The
 * client's stdin reaches a container whose spec has `stdin: true`, its resizes a `tty: true` one; for any other
 * container what the client sends is read and dropped, as a runtime drops input for a container that has none.
 *
 * The first attach of a `stdinOnce` container also gets what the instance wrote before it: `kubectl run -i`
 * attaches only once it has seen the pod Running, by when a short command may have printed everything (a
 * runtime loses that output; kubectl falls back to the logs only when the attach fails).
 */
export function attachToContainer(log: ContainerLog, input?: ContainerInput): AttachRunner {
  return (io) =>
    new Promise((resolve) => {
      const to = (stream: "stdout" | "stderr") =>
        stream === "stderr" ? (io.stderr ?? io.stdout) : (io.stdout ?? io.stderr);
      const first = input?.beginAttach() ?? false;
      const detachInput = connectInput(io, input);
      let stop = () => {};
      const finish = () => {
        stop();
        detachInput();
        io.signal.removeEventListener("abort", finish);
        resolve();
      };
      io.signal.addEventListener("abort", finish, { once: true });
      stop = log.followText(
        (text, stream) => to(stream)?.write(text),
        finish,
        first && input?.spec.stdinOnce === true,
      );
    });
}

/** Feeds the client's stdin and resizes to the container; the returned function ends that (stdinOnce closes it). */
function connectInput(io: StreamIO, input: ContainerInput | undefined): () => void {
  if (input?.tty) io.onResize((size) => input.resize(size));
  if (!input?.open || !io.stdin) {
    io.stdin?.resume();
    return () => {};
  }
  const stdin = io.stdin;
  const onData = (data: Buffer) => input.write(data);
  const onEnd = () => input.endAttach();
  stdin.on("data", onData);
  stdin.on("end", onEnd);
  return () => {
    stdin.off("data", onData);
    stdin.off("end", onEnd);
    stdin.resume();
    input.endAttach();
  };
}

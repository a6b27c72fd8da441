import type { ContainerLog } from "../container-log.js";
import type { AttachRunner } from "./streams.js";

/**
 * Attach: the container's output from now on, as the agent records it (container-log.ts), until the running
 * instance exits or the client leaves. The container's stdout and stderr share one log file, so everything
 * goes to the client's stdout (its stderr when that is all it asked for). The lab starts containers without a
 * stdin (pod spec `stdin: true` is not honoured), so what the client sends is read and dropped, as a runtime
 * drops input for a container that has none.
 */
export function attachToContainer(log: ContainerLog): AttachRunner {
  return (io) =>
    new Promise((resolve) => {
      const out = io.stdout ?? io.stderr;
      io.stdin?.resume();
      let stop = () => {};
      const finish = () => {
        stop();
        io.signal.removeEventListener("abort", finish);
        resolve();
      };
      io.signal.addEventListener("abort", finish, { once: true });
      stop = log.follow((lines) => {
        for (const line of lines) out?.write(line.text);
      }, finish);
    });
}

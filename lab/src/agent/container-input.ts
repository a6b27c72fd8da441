import type { Writable } from "node:stream";
import { ptyRelayProgram } from "./kubelet-api/pty-relay.js";
import type { TerminalSize } from "./kubelet-api/resize.js";

/** What a container's spec asks of its input: `stdin`, `stdinOnce` and `tty`. */
export interface InputSpec {
  stdin: boolean;
  stdinOnce: boolean;
  tty: boolean;
}

/**
 * The command run on a pseudo-terminal of the pty relay (kubelet-api/pty-relay.ts), no size until an attach sends
 * one. It goes inside the sandbox's argv, so the relay holds the container's namespaces: exec enters them by the
 * pid the agent spawned, which is the relay's.
 */
export function onPty(argv: readonly string[]): string[] {
  return ["python3", "-c", ptyRelayProgram, "0", "0", ...argv];
}

/**
 * One running instance's input, kept by the agent for attach: a pipe to its stdin (spec `stdin: true`) and, for a
 * tty, the relay's resize pipe (fd 3). With `stdinOnce` the first attach that ends closes stdin for good, as the
 * kubelet's runtime does; the process then reads end of file.
 */
export class ContainerInput {
  private attached = false;
  private closed: boolean;

  constructor(
    private readonly stdin: Writable | undefined,
    private readonly sizes: Writable | undefined,
    readonly spec: InputSpec,
  ) {
    this.closed = !stdin;
    // The process may exit or close its input at any time; what was not read is dropped, not an error.
    stdin?.on("error", () => {});
    sizes?.on("error", () => {});
  }

  get tty(): boolean {
    return this.spec.tty;
  }

  /** Whether this attach is the first one (it then gets the output so far, attach-to-container.ts). */
  beginAttach(): boolean {
    const first = !this.attached;
    this.attached = true;
    return first;
  }

  /** Whether the client's input still reaches the process. */
  get open(): boolean {
    return !this.closed;
  }

  write(data: Buffer): void {
    if (!this.closed) this.stdin?.write(data);
  }

  resize(size: TerminalSize): void {
    this.sizes?.write(`${size.height} ${size.width}\n`);
  }

  /** The client's input ended or the client left: with stdinOnce, the process's stdin is closed. */
  endAttach(): void {
    if (!this.spec.stdinOnce || this.closed) return;
    this.closed = true;
    this.stdin?.end();
  }
}

// A client that keeps connected UDP sockets open between a test's steps: one python3 process inside a cgroup and a
// network namespace, told over stdin to open a named socket (connect), ask on it (send, then receive), receive
// only, or close it, and answering each command with one JSON line. Every wait is bounded: the sockets' timeouts are short, and a
// command without an answer fails after ANSWER_MS.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface, type Interface } from "node:readline";
import type { TestCgroup } from "./ebpf-fixture.js";

const CLIENT = String.raw`
import errno, json, socket, sys
socks = {}
def run(cmd, name, args):
    if cmd == "open":
        host, port = args[0], int(args[1])
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.0)
        socks[name] = s
        s.connect((host, port))
        return {"peer": list(s.getpeername()[:2])}
    if cmd in ("ask", "recv"):
        s, step = socks[name], "send"
        try:
            if cmd == "ask":
                s.send(b"hi")
            step = "recv"
            return {"answer": s.recv(100).decode()}
        except socket.timeout:
            return {"error": "ETIMEDOUT", "at": step}
        except OSError as e:
            return {"error": errno.errorcode.get(e.errno, str(e.errno)), "at": step}
    if cmd == "close":
        socks.pop(name).close()
        return {}
    return {"error": "unknown command " + cmd}
for line in sys.stdin:
    cmd, name, *args = line.split()
    try:
        out = run(cmd, name, args)
    except OSError as e:
        out = {"error": errno.errorcode.get(e.errno, str(e.errno))}
    print(json.dumps(out), flush=True)
`;

/** How long a command may take: the sockets time out after 1 s. */
const ANSWER_MS = 3000;

export interface AskResult {
  readonly answer?: string;
  readonly error?: string;
  /** The call that failed: "send" or "recv". */
  readonly at?: string;
}

export class SocketClient {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: Interface;
  readonly #waiting: Array<(line: string) => void> = [];
  #stderr = "";

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    this.#lines = createInterface({ input: child.stdout });
    this.#lines.on("line", (line) => this.#waiting.shift()?.(line));
    child.stderr.on("data", (d: Buffer) => {
      this.#stderr += d.toString();
    });
  }

  /** Starts the client in `netns`, inside `cgroup` (entered before the namespace, as runClient does). */
  static async start(netns: string, cgroup: TestCgroup): Promise<SocketClient> {
    const script = `echo $$ > ${cgroup.path}/cgroup.procs && code=$1; shift; exec ip netns exec "$0" python3 -c "$code"`;
    const client = new SocketClient(spawn("sh", ["-c", script, netns, CLIENT]));
    await client.#command("open", "probe", "127.0.0.1", "9");
    await client.#command("close", "probe");
    return client;
  }

  /** Connects a new UDP socket named `name`; getpeername's answer, or the error. */
  open(name: string, host: string, port: number): Promise<{ peer?: [string, number]; error?: string }> {
    return this.#command("open", name, host, String(port));
  }

  /** Sends on `name` and waits for the answer. */
  ask(name: string): Promise<AskResult> {
    return this.#command("ask", name);
  }

  /** Waits for a datagram on `name` (or the error the socket holds). */
  receive(name: string): Promise<AskResult> {
    return this.#command("recv", name);
  }

  /** Ends the client (closing stdin lets it exit; a kill makes sure). */
  async stop(): Promise<void> {
    this.#child.stdin.end();
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise((resolve) => this.#child.once("exit", resolve));
      const timer = setTimeout(() => this.#child.kill("SIGKILL"), 1000);
      await exited;
      clearTimeout(timer);
    }
    this.#lines.close();
  }

  #command<T>(...words: string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(`client: no answer to "${words.join(" ")}" in ${ANSWER_MS} ms; stderr: ${this.#stderr}`),
        );
      }, ANSWER_MS);
      this.#waiting.push((line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as T);
      });
      this.#child.stdin.write(`${words.join(" ")}\n`);
    });
  }
}

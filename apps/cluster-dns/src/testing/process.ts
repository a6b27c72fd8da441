import { type ChildProcess, spawn } from "node:child_process";
import * as dgram from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "switchyard-dns.js");

export interface App {
  child: ChildProcess;
  dir: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartAppOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /**
   * cgroup folders (their `cgroup.procs`) the command joins before it starts, as a container's process is
   * in its cgroups from the start: a shell joins them and execs node, so the pid stays the command's.
   */
  cgroups?: string[];
}

/** Runs the real command in a temporary directory holding `corefile` as ./Corefile. */
export function startApp(corefile: string, args: string[] = [], options: StartAppOptions = {}): App {
  const dir = mkdtempSync(join(tmpdir(), "cluster-dns-"));
  writeFileSync(join(dir, "Corefile"), corefile);
  const command = [process.execPath, BIN, ...args];
  const joins = (options.cgroups ?? []).map((cg) => `echo $$ > '${cg}/cgroup.procs'`);
  const [file, argv] =
    joins.length === 0
      ? [process.execPath, command.slice(1)]
      : ["/bin/sh", ["-c", `${joins.join(" && ")} && exec "$0" "$@"`, ...command]];
  const child = spawn(file, argv, {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  });
  let text = "";
  child.stdout?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  child.stderr?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, dir, output: () => text, exited };
}

// One picker for every test's ports: outside the kernel's ephemeral range, where dig's sockets can land on CoreDNS's.
export { freePort } from "@switchyard/testbed/controlplane";

export async function httpStatus(port: number, path: string): Promise<number | "refused"> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    await res.text();
    return res.status;
  } catch {
    return "refused";
  }
}

/** A minimal A query for `name` with `id`, built by hand so the test does not trust our encoder. */
export function query(id: number, name: string): Buffer {
  const labels = name.split(".").filter(Boolean);
  const qname = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, qname, Buffer.from([0, 1, 0, 1])]);
}

/** An upstream that answers NXDOMAIN to every UDP query (what `forward` needs to have something to reach). */
export async function nxdomainUpstream(): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (msg, rinfo) => {
    if (msg.length < 12) return;
    const reply = Buffer.from(msg);
    reply[2] = (msg[2] ?? 0) | 0x80;
    reply[3] = ((msg[3] ?? 0) & 0xf0) | 3;
    sock.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  return { port: sock.address().port, close: () => sock.close() };
}

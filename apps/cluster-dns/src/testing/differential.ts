// Differential tests: our switchyard-dns and CoreDNS's own binary (packages/testbed/upstream's build of the
// pinned release) run the same Corefile with the same files beside it, get the same queries from the real
// `dig`, and their answers are compared after the parts that must differ (message id, timing) are taken out.
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { resolveBinary } from "@switchyard/testbed/upstream";
import { freePort } from "./process.js";

const execFileAsync = promisify(execFile);
export const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "switchyard-dns.js");

/** Why a differential test cannot run here, or undefined: CoreDNS's binary and dig are both needed. */
export function differentialSkip(): string | undefined {
  if (!resolveBinary("coredns").path) return "no upstream coredns binary (npx switchyard-lab upstream build)";
  return undefined;
}

export interface Server {
  name: "ours" | "coredns";
  port: number;
  /** The address dig asks it on. */
  host: string;
  /** The port each `{{FREE<n>}}` placeholder became for this server (health, ready, metrics endpoints). */
  free: Map<string, number>;
  dir: string;
  child: ChildProcess;
  output(): string;
}

export interface Pair {
  ours: Server;
  coredns: Server;
  /** Runs dig against both; returns each one's normalised answer. */
  dig(...args: string[]): Promise<{ ours: string; coredns: string }>;
  stop(): Promise<void>;
}

/**
 * Starts both servers, each in a fresh folder holding `files` (relative paths, as a Corefile names them), on a
 * free port of its own: `{{PORT}}` in the Corefile and in `args` becomes it, and each `{{FREE<n>}}` another free
 * port of that server's (see Server.free). A null Corefile starts both without
 * one and without -conf (CoreDNS's built-in default). `host` is the address dig asks both on (for a Corefile
 * that binds elsewhere than 127.0.0.1). Resolves once both answer a query.
 */
export async function startPair(
  corefile: string | null,
  files: Record<string, string> = {},
  args: readonly string[] = [],
  host = "127.0.0.1",
): Promise<Pair> {
  // A free port is only free when asked: another test running beside this one may bind it before our server does.
  // That is a clash of the test's making, so the pair starts again on new ports (a few times) rather than failing.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPairOnce(corefile, files, args, host);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test(String(err))) throw err;
    }
  }
}

async function startPairOnce(
  corefile: string | null,
  files: Record<string, string>,
  args: readonly string[],
  host: string,
): Promise<Pair> {
  const coredns = resolveBinary("coredns").path;
  if (!coredns) throw new Error("no upstream coredns binary");
  const ours = await startServer("ours", [process.execPath, BIN], corefile, files, args, host);
  const theirs = await startServer("coredns", [coredns], corefile, files, args, host).catch(async (err) => {
    await stopServer(ours);
    throw err;
  });
  const pair: Pair = {
    ours,
    coredns: theirs,
    async dig(...args) {
      const [a, b] = await Promise.all([digAt(ours, args), digAt(theirs, args)]);
      return { ours: a, coredns: b };
    },
    async stop() {
      await Promise.all([stopServer(ours), stopServer(theirs)]);
    },
  };
  try {
    await Promise.all([waitAnswering(ours), waitAnswering(theirs)]);
  } catch (err) {
    await pair.stop();
    throw err;
  }
  return pair;
}

export async function startServer(
  name: Server["name"],
  command: string[],
  corefile: string | null,
  files: Record<string, string>,
  extra: readonly string[],
  host: string,
): Promise<Server> {
  const port = await freePort();
  const free = new Map<string, number>();
  for (const [token] of (corefile ?? "").matchAll(/\{\{FREE\d+\}\}/g))
    if (!free.has(token)) free.set(token, await freePort());
  const fill = (text: string) =>
    [...free].reduce(
      (t, [token, p]) => t.replaceAll(token, String(p)),
      text.replaceAll("{{PORT}}", String(port)),
    );
  const dir = mkdtempSync(join(tmpdir(), `dns-diff-${name}-`));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  if (corefile !== null) writeFileSync(join(dir, "Corefile"), fill(corefile));
  const [bin = "", ...args] = command;
  const flags = [...(corefile !== null ? ["-conf", "Corefile"] : []), ...extra].map(fill);
  const child = spawn(bin, [...args, ...flags], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  child.stderr?.on("data", (b: Buffer) => {
    text += b.toString();
  });
  return { name, port, host, free, dir, child, output: () => text };
}

export async function stopServer(s: Server): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) {
    const exited = new Promise((r) => s.child.once("exit", r));
    s.child.kill("SIGKILL");
    await exited;
  }
  rmSync(s.dir, { recursive: true, force: true });
}

async function waitAnswering(s: Server): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (s.child.exitCode !== null) throw new Error(`${s.name} exited ${s.child.exitCode}: ${s.output()}`);
    const out = await digAt(s, ["+time=1", "+tries=1", "startup.probe.", "A"]).catch(() => "");
    if (/status: /.test(out)) return;
    if (Date.now() > deadline) throw new Error(`${s.name} never answered on ${s.port}: ${s.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * dig's answer without what differs between two servers by design: the message id, the server's address and
 * port, timing and sizes. No cookie is sent (CoreDNS answers cookies only when asked, and so do we).
 */
async function digAt(s: Pick<Server, "host" | "port">, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync("dig", [
    ...[`@${s.host}`, "-p", String(s.port), "+nocookie", "+noall", "+comments", "+question"],
    ...["+answer", "+authority", "+additional", "+time=2", "+tries=1"],
    ...args,
  ]);
  return normaliseDig(stdout);
}

export function normaliseDig(out: string): string {
  return out
    .split("\n")
    .map((l) =>
      l
        .replace(/, id: \d+/, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((l) => l !== "" && !l.startsWith(";; Got answer") && !l.startsWith(";; WARNING"))
    .join("\n");
}

/** One test per query: both servers get it from dig, and their normalised answers must be the same. */
export function compareQueries(pair: () => Pair, queries: readonly (readonly string[])[]): void {
  for (const query of queries)
    test(query.join(" "), async () => {
      const { ours, coredns } = await pair().dig(...query);
      assert.match(coredns, /status: /);
      assert.equal(ours, coredns);
    });
}

// Starting and stopping the DNS servers under test, and reading what they cost from /proc.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveBinary } from "@switchyard/testbed/upstream";

export type ServerKind = "switchyard" | "coredns";

/** Upstream's CoreDNS where the lab's resolver finds it (its cache for the pinned version, env, PATH). */
export const COREDNS_BIN = resolveBinary("coredns").path ?? "coredns";
const SWITCHYARD_BIN = "apps/cluster-dns/bin/switchyard-dns.js";

export interface RunningServer {
  kind: ServerKind;
  pid: number;
  log: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  kind: ServerKind;
  corefile: string;
  dnsPort: number;
  /** `/ready` is polled here until it answers 200. */
  readyPort?: number;
  log: string;
  env?: NodeJS.ProcessEnv;
  /** switchyard-dns `-workers` (a count or "auto"); CoreDNS ignores it. */
  workers?: string;
  /** Node options before the script (switchyard-dns only), e.g. `--import` of a probe. */
  nodeArgs?: string[];
  /**
   * A cgroup v1 memory cgroup directory to run in: the process joins it before exec, so everything it
   * ever allocates is charged there, as in a container.
   */
  cgroup?: string;
  /** CPUs the server may run on (taskset's list, e.g. "0" or "0-1"); both servers size themselves from it. */
  cpus?: string;
  /** Another switchyard-dns entry script than the checkout's (e.g. a prototype build elsewhere). */
  bin?: string;
  /**
   * A folder laid out as a pod's service-account volume: the server runs in a private mount namespace with
   * it at /var/run/secrets/kubernetes.io/serviceaccount (over a tmpfs /run, so nothing shows on the host), so
   * it finds its in-cluster credentials as in a pod. Set KUBERNETES_SERVICE_HOST/PORT in `env`.
   */
  serviceAccount?: string;
}

/** The shell lines that put the process where a pod's would be before it execs the server. */
function podLikeSetup(o: StartOptions): string[] {
  const lines: string[] = [];
  if (o.serviceAccount) {
    const sa = "/run/secrets/kubernetes.io/serviceaccount";
    lines.push("mount -t tmpfs tmpfs /run", `mkdir -p ${sa}`, `mount --bind '${o.serviceAccount}' ${sa}`);
  }
  if (o.cgroup) lines.push(`echo $$ > '${o.cgroup}/cgroup.procs'`);
  return lines;
}

export async function startServer(o: StartOptions): Promise<RunningServer> {
  const out = openSync(o.log, "w");
  const [program, programArgs] =
    o.kind === "coredns"
      ? [COREDNS_BIN, ["-conf", o.corefile, "-dns.port", String(o.dnsPort), "-quiet"]]
      : [
          process.execPath,
          [
            ...(o.nodeArgs ?? []),
            o.bin ?? SWITCHYARD_BIN,
            "-conf",
            o.corefile,
            "-dns.port",
            String(o.dnsPort),
            "-quiet",
            ...(o.workers ? ["-workers", o.workers] : []),
          ],
        ];
  // taskset execs the server, which keeps the pid spawned.
  const [bin, args] = o.cpus ? ["taskset", ["-c", o.cpus, program, ...programArgs]] : [program, programArgs];
  // A shell joins the cgroup (and mounts the service account in its own mount namespace: unshare execs
  // the shell in place), then execs the server, so the server keeps the pid that was spawned.
  const setup = podLikeSetup(o);
  const shell = ["/bin/sh", "-c", `${[...setup, 'exec "$0" "$@"'].join(" && ")}`, bin, ...args];
  const [file, argv] =
    setup.length === 0
      ? [bin, args]
      : o.serviceAccount
        ? ["unshare", ["-m", ...shell]]
        : [shell[0] ?? "", shell.slice(1)];
  const child = spawn(file, argv, { stdio: ["ignore", out, out], env: { ...process.env, ...o.env } });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${o.kind}: did not start`);
  const server: RunningServer = { kind: o.kind, pid, log: o.log, stop: () => stopChild(child, exited) };
  const deadline = Date.now() + 60_000;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${o.kind} exited at startup:\n${tail(o.log)}`);
    if (o.readyPort === undefined ? await udpBound(o.dnsPort) : await isReady(o.readyPort)) return server;
    await new Promise((r) => setTimeout(r, 100));
  }
  await server.stop();
  throw new Error(`${o.kind} not ready after 60 s:\n${tail(o.log)}`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // SIGKILL: lameduck (health's default is none here, but CoreDNS still drains) would only cost time.
  child.kill("SIGKILL");
  await exited;
}

async function isReady(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/ready`);
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Whether something listens on UDP port `port`, IPv4 or IPv6 (from /proc/net/udp*, port in hex). */
async function udpBound(port: number): Promise<boolean> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return ["/proc/net/udp", "/proc/net/udp6"].some((table) =>
    readFileSync(table, "utf8")
      .split("\n")
      .some((line) => line.trim().split(/\s+/)[1]?.endsWith(hex)),
  );
}

function tail(path: string): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

const TICKS_PER_SECOND = 100;

/** A process and its descendants (switchyard-dns `-workers` forks its workers), from /proc. */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const dir = join("/proc", String(out[i]), "task");
    try {
      for (const tid of readdirSync(dir)) {
        const children = readFileSync(join(dir, tid, "children"), "utf8").trim();
        if (children) out.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** How many processes the server is: 1, or the primary and its workers. */
export function processCount(pid: number): number {
  return processTree(pid).length;
}

/** User + system CPU seconds so far of a process (all its threads) and its children. */
export function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(join("/proc", String(p), "stat"), "utf8");
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone: its time is lost, which only happens when a server dies mid-run.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** Peak resident set size (VmHWM) in MiB, summed over the process and its children. */
export function peakRssMiB(pid: number): number {
  return statusMiB(pid, "VmHWM");
}

/** Resident set size now (VmRSS) in MiB, summed over the process and its children. */
export function rssMiB(pid: number): number {
  return statusMiB(pid, "VmRSS");
}

function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const pattern = new RegExp(`${field}:\\s+(\\d+) kB`);
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(pattern.exec(readFileSync(join("/proc", String(p), "status"), "utf8"))?.[1] ?? 0);
    } catch {
      // Gone.
    }
  }
  return kb / 1024;
}

/**
 * Proportional set size now (Pss of /proc/<pid>/smaps_rollup) in MiB, summed over the process and its children:
 * pages shared between the processes (node's executable in every worker) count once in the sum, not once each.
 */
export function pssMiB(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(
        /^Pss:\s+(\d+) kB/m.exec(readFileSync(join("/proc", String(p), "smaps_rollup"), "utf8"))?.[1] ?? 0,
      );
    } catch {
      // Gone.
    }
  }
  return kb / 1024;
}

/** Busy CPU seconds of the whole machine so far (every core; from /proc/stat). */
export function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const busy = v.reduce((a, b) => a + b, 0) - (v[3] ?? 0) - (v[4] ?? 0) - (v[8] ?? 0) - (v[9] ?? 0);
  return busy / TICKS_PER_SECOND;
}

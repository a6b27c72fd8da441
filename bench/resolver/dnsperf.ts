// Running dnsperf 2.10 and reading its output. 2.10 prints only the average latency and its standard
// deviation, so it runs with -v (one line per answered query: `> RCODE name type seconds`) into a file,
// and the percentiles are computed from those lines afterwards. Parsing after the run, not during it,
// keeps this process off the two cores while the server is measured.
import { spawn } from "node:child_process";
import { closeSync, createReadStream, openSync, readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";

export interface DnsperfOptions {
  port: number;
  queryFile: string;
  seconds: number;
  /** Most queries outstanding (-q); the client is closed-loop, so this sets the queue depth. */
  outstanding: number;
  /** Simulated clients (-c), i.e. source ports. */
  clients: number;
  /** A fixed rate (-Q) instead of as fast as the server answers. */
  maxQps?: number;
  /** CPUs dnsperf may run on (taskset's list), away from the server's. */
  cpus?: string;
  /** Where -v output goes; removed once parsed. */
  scratch: string;
  /** Called about once a second with the seconds done. */
  onTick?: (elapsed: number) => void;
  /** Called the moment dnsperf exits, before its output is parsed. */
  onExit?: () => void;
}

export interface DnsperfResult {
  sent: number;
  completed: number;
  lost: number;
  qps: number;
  rcodes: Record<string, number>;
  /** Seconds, from the per-query lines. */
  p50: number;
  p99: number;
  p999: number;
  avg: number;
  /** dnsperf's own user+system CPU seconds. */
  clientCpu: number;
}

export async function runDnsperf(o: DnsperfOptions): Promise<DnsperfResult> {
  const timeFile = `${o.scratch}.time`;
  const args = [
    "-f",
    "%U %S",
    "-o",
    timeFile,
    "dnsperf",
    ...["-s", "127.0.0.1", "-p", String(o.port), "-d", o.queryFile],
    ...["-l", String(o.seconds), "-q", String(o.outstanding), "-c", String(o.clients), "-t", "2"],
    ...(o.maxQps ? ["-Q", String(o.maxQps)] : []),
    "-v",
  ];
  // dnsperf writes its -v lines (one per query, megabytes a second) straight into the file: piped through
  // this process they cost it about half a core during the run, on whichever CPU it got.
  const sink = openSync(o.scratch, "w");
  const [file, argv] = o.cpus
    ? ["taskset", ["-c", o.cpus, "/usr/bin/time", ...args]]
    : ["/usr/bin/time", args];
  const child = spawn(file, argv, { stdio: ["ignore", sink, "pipe"] });
  closeSync(sink);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const started = Date.now();
  const ticker = setInterval(() => o.onTick?.((Date.now() - started) / 1000), 1000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearInterval(ticker);
  o.onExit?.();
  if (code !== 0) throw new Error(`dnsperf exited ${code}: ${stderr.slice(-2000)}`);

  const latencies: number[] = [];
  const stats: string[] = [];
  const lines = createInterface({ input: createReadStream(o.scratch), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.startsWith("> ")) {
      const seconds = Number(line.slice(line.lastIndexOf(" ") + 1));
      if (Number.isFinite(seconds)) latencies.push(seconds);
    } else stats.push(line);
  }
  rmSync(o.scratch, { force: true });
  const text = stats.join("\n");
  const num = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN);
  const rcodes: Record<string, number> = {};
  for (const m of (/Response codes:\s+(.*)/.exec(text)?.[1] ?? "").matchAll(/([A-Z]+) (\d+)/g)) {
    rcodes[m[1] as string] = Number(m[2]);
  }
  const [user, sys] = readFileSync(timeFile, "utf8").trim().split("\n").pop()?.split(" ").map(Number) ?? [];
  rmSync(timeFile, { force: true });
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
  return {
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    qps: num(/Queries per second:\s+([\d.]+)/),
    rcodes,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    avg: num(/Average Latency \(s\):\s+([\d.]+)/),
    clientCpu: (user ?? 0) + (sys ?? 0),
  };
}

import { type ChildProcess, spawn } from "node:child_process";

/**
 * `conntrack -E` on a node: every NEW, UPDATE and DESTROY of a UDP entry to port 53 there, timestamped by
 * conntrack. A failed lookup's source port finds the entry it met: whether its query made a new entry or reused a
 * standing one, which pod it went to, whether and when the reply was seen (an UPDATE that drops [UNREPLIED]), and
 * whether the entry was shortened (an UPDATE with a 1 s timeout is the proxy's `conntrack -U`) or destroyed while
 * the query was in flight. Runs line-buffered (stdbuf -oL): a pipe is block-buffered otherwise. Its netlink socket
 * asks for a 16 MiB buffer; a proxy round's burst of updates can overflow even that (ENOBUFS: events lost), which
 * `stop` reports.
 */
export interface ConntrackEvent {
  /** Seconds since the epoch, as conntrack stamps it. */
  at: number;
  type: "NEW" | "UPDATE" | "DESTROY";
  /** The entry's timeout when the event was sent, seconds (DESTROY has none). */
  timeout?: number;
  src: string;
  sport: number;
  /** The original destination (the Service address). */
  dst: string;
  /** Who answers: the reply tuple's source, the pod the entry was DNATed to. */
  replySrc: string;
  unreplied: boolean;
  assured: boolean;
  line: string;
}

const EVENT = /^\[(\d+\.\d+)\]\s+\[(NEW|UPDATE|DESTROY)\]\s+udp\s+17\s+(?:(\d+)\s+)?(.*)$/;

/** One line of `conntrack -E -o timestamp` for UDP, or undefined for anything else (its banner, its summary). */
export function parseConntrackEvent(line: string): ConntrackEvent | undefined {
  const m = EVENT.exec(line.trim());
  if (!m) return undefined;
  const rest = m[4] ?? "";
  const field = (name: string, nth: number) =>
    [...rest.matchAll(new RegExp(`\\b${name}=(\\S+)`, "g"))].map((x) => x[1])[nth];
  const src = field("src", 0);
  const dst = field("dst", 0);
  const sport = field("sport", 0);
  const replySrc = field("src", 1);
  if (!src || !dst || !sport || !replySrc) return undefined;
  return {
    at: Number(m[1]),
    type: m[2] as ConntrackEvent["type"],
    ...(m[3] ? { timeout: Number(m[3]) } : {}),
    src,
    sport: Number(sport),
    dst,
    replySrc,
    unreplied: rest.includes("[UNREPLIED]"),
    assured: rest.includes("[ASSURED]"),
    line: line.trim(),
  };
}

/**
 * The events of the entry a lookup sent at `sentMs` from `port` met: from `beforeS` seconds earlier (an entry it
 * reused was made then) to `afterS` seconds later (its reply, or its end).
 */
export function eventsOfLookup(
  events: readonly ConntrackEvent[],
  port: number,
  sentMs: number,
  beforeS = 35,
  afterS = 5,
): ConntrackEvent[] {
  const sent = sentMs / 1000;
  return events.filter((e) => e.sport === port && e.at >= sent - beforeS && e.at <= sent + afterS);
}

/** One event as a report line: seconds from the lookup's sending, then what conntrack printed after the stamp. */
export function describeEvent(e: ConntrackEvent, sentMs: number): string {
  const dt = e.at - sentMs / 1000;
  return `${dt >= 0 ? "+" : ""}${dt.toFixed(3)}s ${e.line.replace(/^\[[^\]]*\]\s+/, "")}`;
}

/** `conntrack -E` for UDP port 53 in a node's namespace (`at` is the argv prefix that enters it). */
export class ConntrackEvents {
  private readonly events: ConntrackEvent[] = [];
  private readonly raw: string[] = [];
  private readonly child: ChildProcess;
  private buffered = "";
  stderr = "";

  constructor(at: readonly string[]) {
    const [program = "", ...args] = [
      ...at,
      ...["stdbuf", "-oL", "conntrack", "-E", "-e", "ALL", "-p", "udp", "--orig-port-dst", "53"],
      // A proxy round updates hundreds of entries at once; the default socket buffer overflows first (ENOBUFS).
      ...["-o", "timestamp", "-b", String(16 << 20)],
    ];
    this.child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.setEncoding("utf8").on("data", (c: string) => {
      const parts = (this.buffered + c).split("\n");
      this.buffered = parts.pop() ?? "";
      for (const l of parts) {
        this.raw.push(l);
        const e = parseConntrackEvent(l);
        if (e) this.events.push(e);
      }
    });
    this.child.stderr?.setEncoding("utf8").on("data", (c: string) => {
      this.stderr += c;
    });
  }

  /**
   * Stops it; the events seen, every line as printed (to keep beside the report), and what went wrong: events lost
   * to a full socket buffer (ENOBUFS), or conntrack's complaint when it did not run.
   */
  async stop(): Promise<{ events: ConntrackEvent[]; raw: string[]; problem?: string }> {
    await new Promise((r) => setTimeout(r, 200));
    this.child.kill("SIGTERM");
    const complaint = this.stderr
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "" && !/flow events have been shown|^NOTICE: Netlink socket buffer size/.test(l));
    return { events: [...this.events], raw: [...this.raw], ...(complaint ? { problem: complaint } : {}) };
  }
}

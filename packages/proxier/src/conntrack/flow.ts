// One conntrack entry as `conntrack -L` prints it, and the parser for that listing. Only the
// two address/port tuples matter here: the original direction says where the client sent
// the packet (a service IP or NodePort), the reply direction where it really went (after
// DNAT, the endpoint answers from its own IP:port).
import { normalizeIP } from "@switchyard/basics";

/** Addresses are in canonical text (as formatIP writes them), which the reconciler compares. */
export interface FlowTuple {
  readonly src: string;
  readonly dst: string;
  readonly sport: number;
  readonly dport: number;
}

export interface ConntrackFlow {
  /** Layer-4 protocol name as conntrack prints it: "udp", "tcp", "sctp", ... */
  readonly protocol: string;
  readonly orig: FlowTuple;
  readonly reply: FlowTuple;
  /** No reply seen yet (`[UNREPLIED]`): a query still waiting for its answer. */
  readonly unreplied?: boolean;
}

/** A unique key over both tuples, the same identity upstream's flow filter uses. */
export function flowKey(f: ConntrackFlow): string {
  const t = (x: FlowTuple) => `${x.src}#${x.sport}#${x.dst}#${x.dport}`;
  return `${f.protocol}#${t(f.orig)}#${t(f.reply)}`;
}

const FIELDS = ["src", "dst", "sport", "dport"] as const;

/**
 * One listing line, e.g.
 * `udp 17 29 src=A dst=B sport=1 dport=2 [UNREPLIED] src=C dst=A sport=3 dport=1 mark=0 use=1`.
 * The first src/dst/sport/dport are the original tuple, the second the reply tuple; of the
 * flags only [UNREPLIED] is kept; state, mark, zone and counters are skipped. Lines without both full tuples give undefined.
 */
export function parseConntrackLine(line: string): ConntrackFlow | undefined {
  const tokens = line.trim().split(/\s+/);
  const protocol = tokens[0];
  if (protocol === undefined || protocol === "" || !/^\d+$/.test(tokens[1] ?? "")) return undefined;
  const seen: Record<string, string>[] = [{}, {}];
  const unreplied = tokens.includes("[UNREPLIED]");
  for (const token of tokens.slice(2)) {
    const eq = token.indexOf("=");
    const name = token.slice(0, eq);
    if (eq < 0 || !(FIELDS as readonly string[]).includes(name)) continue;
    const dir = seen[0]?.[name] === undefined ? seen[0] : seen[1];
    if (dir && dir[name] === undefined) dir[name] = token.slice(eq + 1);
  }
  const orig = tuple(seen[0]);
  const reply = tuple(seen[1]);
  if (!orig || !reply) return undefined;
  return unreplied ? { protocol, orig, reply, unreplied } : { protocol, orig, reply };
}

function tuple(fields: Record<string, string> | undefined): FlowTuple | undefined {
  const src = normalizeIP(fields?.src ?? "");
  const dst = normalizeIP(fields?.dst ?? "");
  const sport = Number(fields?.sport ?? Number.NaN);
  const dport = Number(fields?.dport ?? Number.NaN);
  if (src === null || dst === null || !Number.isInteger(sport) || !Number.isInteger(dport)) return undefined;
  return { src, dst, sport, dport };
}

/** Every entry of a `conntrack -L` stdout; lines it cannot read (none are expected) are skipped. */
export function parseConntrackList(stdout: string): ConntrackFlow[] {
  const out: ConntrackFlow[] = [];
  for (const line of stdout.split("\n")) {
    const flow = parseConntrackLine(line);
    if (flow) out.push(flow);
  }
  return out;
}

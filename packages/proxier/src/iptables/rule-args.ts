// Argument lists that recur in kube-proxy's iptables rules.
import type { Arg, LineSink } from "./line-buffer.js";

const COMMENT_MATCH = ["-m", "comment", "--comment"] as const;

/** `-m comment --comment TEXT`; TEXT with spaces must come already quoted (see quoted()). */
export function commentArgs(text: string): readonly string[] {
  return [...COMMENT_MATCH, text];
}

/** Appends `-A CHAIN -m comment --comment TEXT ARGS…`, the shape of most of our rules. */
export function writeRule(sink: LineSink, chain: string, comment: string, ...args: readonly Arg[]): void {
  sink.write("-A", chain, COMMENT_MATCH, comment, ...args);
}

/** Matches the protocol: `-m tcp -p tcp`. */
export function protocolArgs(proto: string): readonly string[] {
  return ["-m", proto, "-p", proto];
}

/** Matches one service address: `-m tcp -p tcp -d IP --dport PORT`. */
export function destinationArgs(proto: string, ip: string, port: number): readonly string[] {
  return ["-m", proto, "-p", proto, "-d", ip, "--dport", String(port)];
}

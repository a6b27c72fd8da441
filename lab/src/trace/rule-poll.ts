// Every node's kernel, read over and over while a trace runs: each read is the proxy's ruleset traced for one
// new connection from the node to the Service's ClusterIP, kept as the set of endpoint addresses it reaches. A
// node in ebpf mode is read the same way through its pinned maps: a change landing in them is seen and timed as
// a change of rules is.

import { familyOf } from "@switchyard/basics";
import { realClock, sleep } from "@switchyard/kube";
import type { Exec } from "../exec.js";
import { loadRuleset } from "../explain/load.js";
import {
  type NodeReader,
  nodeAddresses,
  nodeProxyMode,
  nodeReader,
  type ReadableNode,
} from "../explain/read-node.js";
import { tracePacketThrough } from "../explain/trace.js";
import type { LabNode } from "../scenarios/kit/scenario-lab.js";

/** One read of one node: when it finished and the endpoint addresses the ClusterIP reached. */
export interface RuleRead {
  at: number;
  reaches: ReadonlySet<string>;
}

export interface Target {
  ip: string;
  port: number;
  protocol: "tcp" | "udp";
}

/** The addresses of "ip:port" outputs (REJECT, DROP and ACCEPT reach no endpoint). */
export function reachedAddresses(outputs: readonly string[]): Set<string> {
  return new Set(outputs.filter((o) => /:\d+$/.test(o)).map((o) => o.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1")));
}

/** A lab node and how its reads reach it (readableNode). */
export interface PolledNode {
  node: LabNode;
  readable: ReadableNode;
}

export class NodePoller {
  readonly reads: RuleRead[] = [];
  problems: string[] = [];

  constructor(
    readonly node: LabNode,
    private readonly reader: NodeReader,
    private readonly addresses: readonly string[],
    private readonly now: () => number = Date.now,
  ) {}

  get mode() {
    return this.reader.mode;
  }

  /**
   * One read; its time is when `nft`/`iptables-save` returned or the maps were dumped, before the (slower)
   * parse and trace. The connection starts on the node itself, from its own address.
   */
  async readOnce(target: Target): Promise<void> {
    const live = await this.reader.read();
    const at = this.now();
    const trace = tracePacketThrough(loadRuleset(live), this.addresses, {
      sourceIP:
        this.addresses.find((a) => familyOf(a) === familyOf(target.ip) && !a.startsWith("127.")) ?? "",
      destIP: target.ip,
      destPort: target.port,
      protocol: target.protocol,
      origin: "node",
    });
    this.problems = trace.problems;
    this.reads.push({ at, reaches: reachedAddresses(trace.destinations.map((d) => d.output)) });
  }

  /** Mean time between two reads (ms). */
  get intervalMs(): number {
    const n = this.reads.length;
    return n < 2 ? 0 : ((this.reads[n - 1]?.at ?? 0) - (this.reads[0]?.at ?? 0)) / (n - 1);
  }
}

/** Reads every node's rules, each node in its own loop, until stopped. */
export class RulePoll {
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private failure: string | undefined;

  private constructor(
    readonly pollers: NodePoller[],
    private readonly target: Target,
  ) {}

  static async start(exec: Exec, nodes: readonly PolledNode[], target: Target): Promise<RulePoll> {
    const family = familyOf(target.ip);
    const pollers = await Promise.all(
      nodes.map(async ({ node, readable }) => {
        const mode = await nodeProxyMode(exec, readable, family);
        const reader = await nodeReader(exec, readable, mode, family);
        return new NodePoller(node, reader, await nodeAddresses(exec, node.run));
      }),
    );
    const poll = new RulePoll(pollers, target);
    await Promise.all(pollers.map((p) => p.readOnce(target)));
    poll.loops = pollers.map((p) => poll.run(p));
    return poll;
  }

  private async run(p: NodePoller): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await p.readOnce(this.target);
      } catch (err) {
        this.failure = `${p.node.name}: ${(err as Error).message}`;
        return;
      }
      await sleep(realClock, 10);
    }
  }

  /** The reads of one node so far; throws when reading a node failed. */
  readsOf(node: string): readonly RuleRead[] {
    if (this.failure) throw new Error(`reading a node's rules failed: ${this.failure}`);
    return this.pollers.find((p) => p.node.name === node)?.reads ?? [];
  }

  /** The longest of the nodes' mean times between reads (ms): how finely a node's programming time is known. */
  get resolutionMs(): number {
    return Math.max(0, ...this.pollers.map((p) => p.intervalMs));
  }

  /** What the nodes' tracers could not read or follow, one line each. */
  notes(): string[] {
    return this.pollers.flatMap((p) => p.problems.map((x) => `${p.node.name}: ${x}`));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
  }
}

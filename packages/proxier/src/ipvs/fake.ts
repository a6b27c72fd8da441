// An in-memory IPVS for tests (this kernel has no ip_vs): applies ipvsadm-restore input
// atomically and refuses what the kernel refuses (a real server without its virtual server,
// duplicates, edits or deletes of missing entries).

import { normalizeIP } from "@switchyard/basics";
import type { IPVSRestorer } from "../apply/ipvs-applier.js";
import type { Protocol } from "../model/service-port-name.js";
import type { IPVSTable } from "./ipvsadm.js";
import {
  byKey,
  hostPort,
  type RealServer,
  type VirtualServer,
  type VirtualServerEntry,
  vsKey,
} from "./virtual-server.js";

export class IPVSError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = "IPVSError";
  }
}

interface Command {
  readonly op: string;
  readonly service?: { protocol: Protocol; address: string; port: number };
  readonly real?: { address: string; port: number };
  readonly scheduler?: string;
  readonly persistence?: number;
  readonly schedFlags?: string[];
  readonly weight?: number;
}

function parseHostPort(text: string): { address: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  const address = m?.[1] === undefined ? null : normalizeIP(m[1]);
  const port = Number(m?.[2]);
  return address !== null && port > 0 && port < 65536 ? { address, port } : null;
}

const SERVICE_FLAGS: Record<string, Protocol> = { "-t": "TCP", "-u": "UDP", "--sctp-service": "SCTP" };

function parseCommand(line: string, fail: (m: string) => never): Command {
  const args = line.split(/\s+/);
  const op = args.shift() ?? "";
  const cmd: { -readonly [K in keyof Command]: Command[K] } = { op };
  while (args.length > 0) {
    const flag = args.shift() ?? "";
    const value = () => args.shift() ?? fail(`${flag} needs a value`);
    const protocol = SERVICE_FLAGS[flag];
    if (protocol) {
      const hp = parseHostPort(value()) ?? fail("bad service address");
      cmd.service = { protocol, ...hp };
    } else if (flag === "-r") cmd.real = parseHostPort(value()) ?? fail("bad real server address");
    else if (flag === "-s") cmd.scheduler = value();
    else if (flag === "-p") cmd.persistence = Number(value());
    else if (flag === "-b") cmd.schedFlags = value().split(",");
    else if (flag === "-w") cmd.weight = Number(value());
    else if (flag !== "-m") fail(`unsupported option ${flag}`);
  }
  return cmd;
}

type MutableTable = Map<string, { vs: VirtualServer; reals: Map<string, RealServer> }>;

export class FakeIPVS implements IPVSRestorer {
  #table: MutableTable = new Map();
  /** Every program given to restore(), applied or not. */
  readonly history: string[] = [];

  /** Runs `text` as ipvsadm-restore would, except that it is all or nothing. */
  restore(text: string): void {
    this.history.push(text);
    const table: MutableTable = new Map(
      [...this.#table].map(([k, e]) => [k, { vs: e.vs, reals: new Map(e.reals) }]),
    );
    for (const [index, raw] of text.split("\n").entries()) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const fail = (message: string): never => {
        throw new IPVSError(message, index + 1);
      };
      apply(table, parseCommand(line, fail), fail);
    }
    this.#table = table;
  }

  /** The table as plain data (the shape renderIPVS keeps as state). */
  table(): IPVSTable {
    return new Map([...this.#table].map(([k, e]) => [k, { vs: e.vs, reals: new Map(e.reals) }]));
  }

  /** `ipvsadm -Ln`-like text, sorted: the canonical form tests compare. */
  dump(): string {
    const lines = ["Prot LocalAddress:Port Scheduler Flags", "  -> RemoteAddress:Port Forward Weight"];
    for (const entry of [...this.#table.values()].sort(byKey((e) => vsKey(e.vs)))) {
      const { vs } = entry;
      const flags = [vs.persistence > 0 ? `persistent ${vs.persistence}` : "", ...vs.schedFlags].filter(
        Boolean,
      );
      lines.push([vs.protocol, hostPort(vs.address, vs.port), vs.scheduler, ...flags].join(" "));
      for (const rs of [...entry.reals.values()].sort(byKey((r) => hostPort(r.address, r.port)))) {
        lines.push(`  -> ${hostPort(rs.address, rs.port)} Masq ${rs.weight}`);
      }
    }
    return `${lines.join("\n")}\n`;
  }
}

function apply(table: MutableTable, cmd: Command, fail: (m: string) => never): void {
  if (cmd.op === "-C") {
    table.clear();
    return;
  }
  const svc = cmd.service ?? fail(`${cmd.op} needs a service address`);
  const key = vsKey(svc);
  const entry = table.get(key);
  switch (cmd.op) {
    case "-A":
    case "-E": {
      if (cmd.op === "-A" && entry) fail(`virtual server ${key} exists`);
      if (cmd.op === "-E" && !entry) fail(`no virtual server ${key}`);
      const vs: VirtualServer = {
        ...svc,
        scheduler: cmd.scheduler ?? "wlc",
        persistence: cmd.persistence ?? 0,
        schedFlags: cmd.schedFlags ?? [],
      };
      table.set(key, { vs, reals: entry?.reals ?? new Map() });
      return;
    }
    case "-D":
      if (!table.delete(key)) fail(`no virtual server ${key}`);
      return;
  }
  if (!entry) fail(`no virtual server ${key} for real server`);
  const real = cmd.real ?? fail(`${cmd.op} needs -r`);
  const id = hostPort(real.address, real.port);
  const existing = entry.reals.get(id);
  switch (cmd.op) {
    case "-a":
    case "-e":
      if (cmd.op === "-a" && existing) fail(`real server ${id} exists in ${key}`);
      if (cmd.op === "-e" && !existing) fail(`no real server ${id} in ${key}`);
      entry.reals.set(id, { ...real, weight: cmd.weight ?? 1 });
      return;
    case "-d":
      if (!entry.reals.delete(id)) fail(`no real server ${id} in ${key}`);
      return;
    default:
      fail(`unsupported command ${cmd.op}`);
  }
}

/** One virtual server, for tests that inspect a single entry. */
export function findVirtualServer(
  table: IPVSTable,
  protocol: Protocol,
  address: string,
  port: number,
): VirtualServerEntry | undefined {
  return table.get(vsKey({ protocol, address, port }));
}

// An Exec that plays the kernel for IPVSApplier and IptablesRestoreApplier: ipvsadm, ipset,
// ip and iptables commands land on FakeIPVS, FakeIPSet, FakeIPTables and a set of bound
// addresses, so the real appliers and the backend run unchanged on top of the fakes.
import { type Exec, type ExecResult, stdinText } from "../../src/apply/exec.js";
import { argsText, FakeIPTables } from "../../src/iptables/fake.js";
import { FakeIPVS } from "../../src/ipvs/fake.js";
import { FakeIPSet } from "../../src/ipvs/fake-ipset.js";
import { realServerName } from "../../src/ipvs/ipvsadm.js";
import { byKey, hostPort, vsKey } from "../../src/ipvs/virtual-server.js";
import type { Call } from "../apply/fake-exec.js";

/** `ipvsadm -Ln` text for the fake's table; `busy` real servers show one active connection. */
export function ipvsadmList(ipvs: FakeIPVS, busy: ReadonlySet<string>): string {
  const lines = [
    "IP Virtual Server version 1.2.1 (size=4096)",
    "Prot LocalAddress:Port Scheduler Flags",
    "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn",
  ];
  for (const e of [...ipvs.table().values()].sort(byKey((x) => vsKey(x.vs)))) {
    const flags = [e.vs.persistence > 0 ? `persistent ${e.vs.persistence}` : "", e.vs.schedFlags.join(",")];
    lines.push(
      [e.vs.protocol.padEnd(4), hostPort(e.vs.address, e.vs.port), e.vs.scheduler, ...flags].join(" ").trim(),
    );
    for (const rs of e.reals.values()) {
      const active = busy.has(realServerName(e.vs, rs)) ? 1 : 0;
      lines.push(
        `  -> ${hostPort(rs.address, rs.port).padEnd(28)} Masq    ${rs.weight}      ${active}          0`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

export class FakeKernelExec {
  readonly ipvs = new FakeIPVS();
  readonly ipset = new FakeIPSet();
  readonly iptables = new FakeIPTables();
  readonly bound = new Set<string>();
  dummy = false;
  readonly busy = new Set<string>();
  readonly calls: Call[] = [];
  /** Commands ("ipvsadm -R", "iptables-restore", ...) that fail the next n times. */
  readonly failures = new Map<string, number>();

  readonly exec: Exec = async (command, args, options) => {
    const call = {
      command,
      args: [...args],
      stdin: options?.stdin === undefined ? undefined : stdinText(options.stdin),
    };
    this.calls.push(call);
    const key = `${command} ${args[0] ?? ""}`.trim();
    for (const k of [key, command]) {
      const n = this.failures.get(k) ?? 0;
      if (n > 0) {
        this.failures.set(k, n - 1);
        return { code: 1, stdout: "", stderr: `injected failure of ${k}\n` };
      }
    }
    try {
      return { code: 0, stdout: "", stderr: "", ...this.#answer(command, args, call.stdin ?? "") };
    } catch (e) {
      return { code: 1, stdout: "", stderr: `${(e as Error).message}\n` };
    }
  };

  /** Calls of one command whose first argument is `first` (any when omitted). */
  callsOf(command: string, first?: string): Call[] {
    return this.calls.filter((c) => c.command === command && (first === undefined || c.args[0] === first));
  }

  #answer(command: string, args: readonly string[], stdin: string): Partial<ExecResult> {
    const a = args.join(" ");
    switch (command) {
      case "ipvsadm":
        if (a === "-Ln") return { stdout: ipvsadmList(this.ipvs, this.busy) };
        if (a === "-R") {
          this.ipvs.restore(stdin);
          return {};
        }
        if (a === "-C") {
          this.ipvs.restore("-C\n");
          return {};
        }
        break;
      case "ipset":
        if (a === "restore -exist") {
          this.ipset.restore(stdin);
          return {};
        }
        break;
      case "ip":
        return this.#ip(args);
      case "iptables": {
        // The applier's -w/-W prefix, then -t TABLE and the verb.
        const rest = args.slice(4);
        const [, table, verb, chain = "", ...spec] = rest;
        const t = table as "nat" | "filter";
        if (verb === "-N")
          return this.iptables.ensureChain(t, chain) ? { code: 1, stderr: "Chain already exists.\n" } : {};
        if (verb === "-C") return this.iptables.rules(t, chain)?.includes(argsText(spec)) ? {} : { code: 1 };
        if (verb === "-I") {
          this.iptables.ensureRule("prepend", t, chain, spec);
          return {};
        }
        break;
      }
      case "iptables-restore": {
        this.iptables.restore(stdin, { noflush: args.includes("--noflush") });
        return {};
      }
    }
    throw new Error(`fake kernel: unexpected ${command} ${a}`);
  }

  #ip(args: readonly string[]): Partial<ExecResult> {
    const a = args.join(" ");
    if (a === "link add kube-ipvs0 type dummy") {
      if (this.dummy) return { code: 2, stderr: "RTNETLINK answers: File exists\n" };
      this.dummy = true;
      return {};
    }
    if (a === "link del kube-ipvs0") {
      if (!this.dummy) return { code: 1, stderr: 'Cannot find device "kube-ipvs0"\n' };
      this.dummy = false;
      this.bound.clear();
      return {};
    }
    if (a === "-o addr show dev kube-ipvs0") {
      if (!this.dummy) return { code: 1, stderr: 'Device "kube-ipvs0" does not exist.\n' };
      const lines = [...this.bound].map((ip) => `9: kube-ipvs0    inet ${ip}/32 scope global kube-ipvs0`);
      return { stdout: lines.join("\n") };
    }
    const m = /^addr (add|del) ([^/]+)\/\d+ dev kube-ipvs0$/.exec(a);
    if (m && this.dummy) {
      const ip = m[2] ?? "";
      if (m[1] === "add") {
        if (this.bound.has(ip)) return { code: 2, stderr: "RTNETLINK answers: File exists\n" };
        this.bound.add(ip);
      } else if (!this.bound.delete(ip))
        return { code: 2, stderr: "RTNETLINK answers: Cannot assign requested address\n" };
      return {};
    }
    throw new Error(`fake kernel: unexpected ip ${a}`);
  }
}

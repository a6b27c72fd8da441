// Runs iptables-restore / ip6tables-restore (and the few single-rule commands kube-proxy
// needs around it) against one iptables backend: legacy (x_tables) or nft (nf_tables).
import type { IPFamily } from "@switchyard/basics";
import { CommandNotFoundError, type Exec, firstLine, realExec } from "./exec.js";

export type IPTablesBackend = "legacy" | "nft";
export type IPTablesTableName = "filter" | "nat" | "mangle" | "raw" | "security";

/** kube-proxy waits up to 5 s for the xtables lock, polling every 100 ms. */
export const WAIT_ARGS = ["-w", "5", "-W", "100000"] as const;

export class IPTablesCommandError extends Error {
  readonly command: string;
  readonly exitCode: number;
  readonly stderr: string;
  constructor(command: string, exitCode: number, stderr: string) {
    super(`${command}: ${firstLine(stderr) || `exited with status ${exitCode}`}`);
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** The binary for a family and backend; no backend means whatever the distribution links. */
export function iptablesBinary(
  tool: "" | "-save" | "-restore",
  family: IPFamily,
  backend?: IPTablesBackend,
): string {
  const base = family === "IPv6" ? "ip6tables" : "iptables";
  return backend ? `${base}-${backend}${tool}` : `${base}${tool}`;
}

export interface IptablesRestoreApplierOptions {
  readonly family: IPFamily;
  /** Which backend's binaries to run; unset runs the plain names (see detectIPTablesBackend). */
  readonly backend?: IPTablesBackend;
  readonly exec?: Exec;
}

export interface RestoreOptions {
  /** --noflush: leave chains the input does not mention alone (kube-proxy always sets it). */
  readonly noflush?: boolean;
  /** --counters: keep the packet counters given in the input. */
  readonly counters?: boolean;
}

/**
 * What writing a ruleset needs from iptables: IptablesRestoreApplier and FakeIPTables both fit,
 * so a change here fails the fake's typecheck rather than its tests.
 */
export interface IPTablesRestorer {
  /** Applies iptables-restore input atomically per table, or throws and changes nothing. */
  restore(text: string, options?: RestoreOptions): void | Promise<void>;
}

export class IptablesRestoreApplier implements IPTablesRestorer {
  readonly family: IPFamily;
  readonly backend: IPTablesBackend | undefined;
  readonly #exec: Exec;

  constructor(options: IptablesRestoreApplierOptions) {
    this.family = options.family;
    this.backend = options.backend;
    this.#exec = options.exec ?? realExec;
  }

  async #run(
    tool: "" | "-save" | "-restore",
    args: readonly string[],
    stdin?: string | readonly (string | Uint8Array)[],
  ) {
    const command = iptablesBinary(tool, this.family, this.backend);
    try {
      return { command, result: await this.#exec(command, args, stdin === undefined ? {} : { stdin }) };
    } catch (e) {
      // One line is enough to tell an operator what to install.
      if (e instanceof CommandNotFoundError) throw new CommandNotFoundError(command);
      throw e;
    }
  }

  /** Applies restore input atomically per table; throws with iptables-restore's first error line. */
  async restore(
    text: string | readonly (string | Uint8Array)[],
    options: RestoreOptions = {},
  ): Promise<void> {
    const args: string[] = [...WAIT_ARGS];
    if (options.noflush ?? true) args.push("--noflush");
    if (options.counters) args.push("--counters");
    const { command, result } = await this.#run("-restore", args, text);
    if (result.code !== 0) throw new IPTablesCommandError(command, result.code, result.stderr);
  }

  /** iptables-save output for one table. */
  async save(table: IPTablesTableName): Promise<string> {
    const { command, result } = await this.#run("-save", ["-t", table]);
    if (result.code !== 0) throw new IPTablesCommandError(command, result.code, result.stderr);
    return result.stdout;
  }

  /**
   * iptables-save output for every table that exists, and only those: unlike `-t <table>`, which makes the
   * legacy backend create the table it is asked about, a plain save creates nothing.
   */
  async saveExisting(): Promise<string> {
    const { command, result } = await this.#run("-save", []);
    if (result.code !== 0) throw new IPTablesCommandError(command, result.code, result.stderr);
    return result.stdout;
  }

  /** Creates a chain unless it exists. */
  async ensureChain(table: IPTablesTableName, chain: string): Promise<void> {
    const { command, result } = await this.#run("", [...WAIT_ARGS, "-t", table, "-N", chain]);
    if (result.code !== 0 && !/already exists/i.test(result.stderr)) {
      throw new IPTablesCommandError(command, result.code, result.stderr);
    }
  }

  /** Adds a rule (first or last in the chain) unless an identical one is present (-C, then -I/-A). */
  async ensureRule(
    position: "prepend" | "append",
    table: IPTablesTableName,
    chain: string,
    spec: readonly string[],
  ): Promise<void> {
    const check = await this.#run("", [...WAIT_ARGS, "-t", table, "-C", chain, ...spec]);
    if (check.result.code === 0) return;
    const verb = position === "prepend" ? "-I" : "-A";
    const add = await this.#run("", [...WAIT_ARGS, "-t", table, verb, chain, ...spec]);
    if (add.result.code !== 0)
      throw new IPTablesCommandError(add.command, add.result.code, add.result.stderr);
  }
}

// kubelet (1.17+) always creates one of these in mangle; whichever backend has it is in use.
const KUBELET_CHAINS = /^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY)\b/m;

/**
 * Which backend the node's other components use, decided the way iptables-wrapper does:
 * look for kubelet's mangle chains with iptables-nft first (cheap), then in the full
 * iptables-legacy-save output (asking legacy for "-t mangle" would create that table);
 * nothing found means nft. Failures of the probes are ignored on purpose.
 */
export async function detectIPTablesBackend(exec: Exec = realExec): Promise<IPTablesBackend> {
  const probe = async (command: string, args: string[]): Promise<boolean> => {
    try {
      const r = await exec(command, args);
      return KUBELET_CHAINS.test(r.stdout);
    } catch {
      return false;
    }
  };
  if (await probe("iptables-nft-save", ["-t", "mangle"])) return "nft";
  if (await probe("ip6tables-nft-save", ["-t", "mangle"])) return "nft";
  if (await probe("iptables-legacy-save", [])) return "legacy";
  if (await probe("ip6tables-legacy-save", [])) return "legacy";
  return "nft";
}

/** The backend the plain `iptables` binary is linked to, from `iptables --version`. */
export async function installedIPTablesBackend(exec: Exec = realExec): Promise<IPTablesBackend> {
  const r = await exec("iptables", ["--version"]);
  if (r.code !== 0) throw new IPTablesCommandError("iptables", r.code, r.stderr);
  return /\(nf_tables\)/.test(r.stdout) ? "nft" : "legacy";
}

// Runs nftables transactions with the real `nft` binary. Errors come back as NFTError (the
// fake throws it too), so isNotFound/isAlreadyExists work against either.
import { NFTError, type NFTErrorKind } from "../nftables/errors.js";
import type { NFTFamily } from "../nftables/objects.js";
import type { Transaction } from "../nftables/transaction.js";
import { type Exec, firstLine, realExec } from "./exec.js";

/**
 * What a sync needs from nftables: the real applier and FakeNFTables both fit, so a proxier
 * can be tested on the fake and run on the kernel with no adapter.
 */
export interface NFTRunner {
  /** Applies the transaction atomically, or throws and changes nothing. */
  run(tx: Transaction): void | Promise<void>;
  /** Like run, but only checks that the kernel would accept it. */
  check(tx: Transaction): void | Promise<void>;
}

/** An error from the nft binary; `kind` comes from the errno text nft prints. */
export class NftCommandError extends NFTError {
  readonly exitCode: number;
  /** nft's complete stderr (the failing line and a caret marker follow the first line). */
  readonly stderr: string;
  constructor(kind: NFTErrorKind, exitCode: number, stderr: string) {
    super(kind, firstLine(stderr) || `nft exited with status ${exitCode}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

// nft never calls setlocale, so strerror() text is always English and safe to match.
const ERRNO_KINDS: readonly [RegExp, NFTErrorKind][] = [
  [/No such file or directory/, "not-found"],
  [/File exists/, "exists"],
  [/Device or resource busy/, "busy"],
];

/** Classifies nft's stderr: not found, already exists, busy, or anything else ("invalid"). */
export function classifyNftError(stderr: string): NFTErrorKind {
  const head = firstLine(stderr);
  for (const [pattern, kind] of ERRNO_KINDS) if (pattern.test(head)) return kind;
  return "invalid";
}

export interface NftApplierOptions {
  readonly exec?: Exec;
  /** The nft binary; "nft" on PATH by default. */
  readonly nft?: string;
}

export class NftApplier implements NFTRunner {
  readonly #exec: Exec;
  readonly #nft: string;

  constructor(options: NftApplierOptions = {}) {
    this.#exec = options.exec ?? realExec;
    this.#nft = options.nft ?? "nft";
  }

  async run(tx: Transaction): Promise<void> {
    await this.#apply(tx, []);
  }

  async check(tx: Transaction): Promise<void> {
    await this.#apply(tx, ["--check"]);
  }

  async #apply(tx: Transaction, flags: readonly string[]): Promise<void> {
    // A builder error means the transaction is incomplete; sending the rest would half-apply it.
    if (tx.error) throw tx.error;
    if (tx.size === 0) return;
    await this.script(tx.script(), flags);
  }

  /** Runs an `nft -f -` script. */
  async script(text: string, flags: readonly string[] = []): Promise<void> {
    const r = await this.#exec(this.#nft, [...flags, "-f", "-"], { stdin: text });
    if (r.code !== 0) throw new NftCommandError(classifyNftError(r.stderr), r.code, r.stderr);
  }

  /**
   * Names of the chains and sets in a table; both empty when the table does not exist. A
   * proxier reads these once at start-up so leftovers of an earlier run get cleaned up.
   */
  async listObjects(family: NFTFamily, table: string): Promise<{ chains: string[]; sets: string[] }> {
    const r = await this.#exec(this.#nft, ["--json", "list", "table", family, table]);
    if (r.code !== 0) {
      const kind = classifyNftError(r.stderr);
      if (kind === "not-found") return { chains: [], sets: [] };
      throw new NftCommandError(kind, r.code, r.stderr);
    }
    const parsed = JSON.parse(r.stdout) as { nftables?: Record<string, { name?: string }>[] };
    const chains: string[] = [];
    const sets: string[] = [];
    for (const entry of parsed.nftables ?? []) {
      if (entry.chain?.name) chains.push(entry.chain.name);
      if (entry.set?.name) sets.push(entry.set.name);
    }
    return { chains, sets };
  }

  /**
   * Deletes a table if it exists. Adding it first makes the delete valid either way, in one
   * atomic batch, which also works on nft versions without `destroy`.
   */
  async deleteTable(family: NFTFamily, table: string): Promise<void> {
    await this.script(`add table ${family} ${table}\ndelete table ${family} ${table}\n`);
  }
}

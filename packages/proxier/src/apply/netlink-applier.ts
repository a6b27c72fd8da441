// Runs nftables transactions over netlink from this process: no `nft` process, no text parsing,
// no cache filled from the kernel, and anonymous sets under names of our own (nft leaves the name to
// the kernel, whose search for a free number scans every set in the table for every new set). The
// kernel gets the messages nft 1.0.6 would send for the same script, so it ends up holding the same
// table. What the encoder does not speak, and everything when netlink cannot be opened here, goes to
// the `nft` binary instead (`NftApplier`).
import { NFTError, type NFTErrorKind } from "../nftables/errors.js";
import { type AnonymousSetNamer, type EncodedBatch, encodeTransaction } from "../nftables/netlink/batch.js";
import {
  type DumpKind,
  dumpRequest,
  isNamedSet,
  newDumpProgress,
  objectName,
  readDumpDatagram,
} from "../nftables/netlink/dump.js";
import { errorOf, isError, parseMessages } from "../nftables/netlink/reader.js";
import { UnsupportedSyntax } from "../nftables/netlink/values.js";
import type { NFTFamily } from "../nftables/objects.js";
import { type StagingOptions, stageableChains, stageChains } from "../nftables/staging.js";
import { Transaction } from "../nftables/transaction.js";
import type { ProxierLogger } from "../proxier/backend.js";
import type { Exec } from "./exec.js";
import { NetfilterSocket } from "./netlink-socket.js";
import { type NFTRunner, NftApplier } from "./nft-applier.js";

const ERRNO_TEXT: Readonly<Record<number, [NFTErrorKind, string]>> = {
  1: ["invalid", "Operation not permitted"],
  2: ["not-found", "No such file or directory"],
  16: ["busy", "Device or resource busy"],
  17: ["exists", "File exists"],
  22: ["invalid", "Invalid argument"],
  95: ["invalid", "Operation not supported"],
};

/** The kernel refused a batch; `errno` and the statement of the first refused message. */
export class NetlinkNftError extends NFTError {
  readonly errno: number;
  readonly statement: string;
  constructor(errno: number, statement: string) {
    const [kind, text] = ERRNO_TEXT[errno] ?? ["invalid", `errno ${errno}`];
    super(kind, `${text}: ${statement}`);
    this.errno = errno;
    this.statement = statement;
  }
}

/** Which writer a runner uses: netlink when it can be opened (`auto`), always netlink, or always `nft`. */
export type NftWriter = "auto" | "netlink" | "nft";

export interface NetlinkNftApplierOptions {
  /** Program the table of this named network namespace (`/run/netns/<name>`); tests use it. */
  readonly netns?: string;
  /** Runs `nft` for the fallback and start-up listing; NftApplier with this exec by default. */
  readonly exec?: Exec;
  readonly fallback?: NftApplier;
  /** "netlink" makes an unopenable socket an error instead of a fallback. */
  readonly writer?: Exclude<NftWriter, "nft">;
  readonly logger?: ProxierLogger;
  /** When a full sync's new chains go ahead in transactions of their own (see stageChains). */
  readonly staging?: Partial<Pick<StagingOptions, "minChains" | "chainsPerStage">>;
}

/** Counts of how transactions went, for tests and logs. */
export interface NetlinkApplierStats {
  netlink: number;
  fallback: number;
  /** Transactions of `netlink` sent as staging transactions and a last one. */
  staged: number;
}

/**
 * Staging starts at 512 new chains, 256 per transaction: at 10k Services a batch's walks cost
 * (256^2)/2 entries each instead of (10k^2)/2, and the extra commits are a few ms each.
 */
const DEFAULT_STAGING = { minChains: 512, chainsPerStage: 256 };

/**
 * `_m<n>` and `_s<n>` (n in base 36): short, because the kernel compares a new set's name with every
 * set's name in the table, and of a form neither nft (`__map%d`) nor the renderer's named sets take.
 * Numbering starts past the highest such name the table holds, so an earlier run's sets, which a
 * full sync deletes only as it goes, are never named again.
 */
const OURS = /^_[sm]([0-9a-z]+)$/;

class Namer implements AnonymousSetNamer {
  #n = 0;
  /** Whether the table's names were read (once per table, before the first batch). */
  readonly seeded = new Set<string>();
  next(kind: "set" | "map"): string {
    return `_${kind[0]}${(this.#n++).toString(36)}`;
  }
  /** Skips past the numbers of names already in the table. */
  seed(table: string, names: readonly string[]): void {
    this.seeded.add(table);
    for (const name of names) {
      const m = OURS.exec(name);
      if (m?.[1] !== undefined) this.#n = Math.max(this.#n, Number.parseInt(m[1], 36) + 1);
    }
  }
}

export class NetlinkNftApplier implements NFTRunner {
  readonly #o: NetlinkNftApplierOptions;
  readonly #nft: NftApplier;
  readonly #namer = new Namer();
  /** The `type` of every named set a transaction declared, for later batches that only touch elements. */
  readonly #setTypes = new Map<string, string>();
  #socket: Promise<NetfilterSocket | null> | undefined;
  /** Where the next batch's sequence numbers start. */
  #seq = 1;
  readonly stats: NetlinkApplierStats = { netlink: 0, fallback: 0, staged: 0 };
  /** Which writer the last transaction went through. */
  lastWriter: "netlink" | "nft" | undefined;

  constructor(options: NetlinkNftApplierOptions = {}) {
    this.#o = options;
    this.#nft = options.fallback ?? new NftApplier(options.exec ? { exec: options.exec } : {});
  }

  /** The socket, or null when netlink is unavailable here and `nft` does the work. */
  #open(): Promise<NetfilterSocket | null> {
    this.#socket ??= NetfilterSocket.open(this.#o.netns === undefined ? {} : { netns: this.#o.netns }).catch(
      (err: unknown) => {
        if (this.#o.writer === "netlink") throw err;
        this.#o.logger?.warn("nftables over netlink is unavailable; using the nft binary", { error: err });
        return null;
      },
    );
    return this.#socket;
  }

  /** True once a socket is open (false: every transaction goes to `nft`). */
  async usesNetlink(): Promise<boolean> {
    return (await this.#open()) !== null;
  }

  async run(tx: Transaction): Promise<void> {
    await this.#apply(tx, false);
  }

  /** Sends the batch without its end: the kernel validates it and then throws it away, as `nft --check`. */
  async check(tx: Transaction): Promise<void> {
    await this.#apply(tx, true);
  }

  async #apply(tx: Transaction, checkOnly: boolean): Promise<void> {
    if (tx.error) throw tx.error;
    if (tx.size === 0) return;
    const socket = await this.#open();
    if (socket && !this.#namer.seeded.has(`${tx.family} ${tx.table}`)) {
      const sets = await dump(socket, "set", tx.family, tx.table);
      this.#namer.seed(
        `${tx.family} ${tx.table}`,
        sets.map((m) => objectName("set", m)),
      );
    }
    const parts = socket && !checkOnly ? await this.#staged(socket, tx) : [tx];
    const batches = socket ? this.#encodeAll(parts) : undefined;
    this.lastWriter = batches ? "netlink" : "nft";
    if (!socket || !batches) {
      this.stats.fallback++;
      this.#remember(tx);
      await (checkOnly ? this.#nft.check(tx) : this.#nft.run(tx));
      return;
    }
    this.stats.netlink++;
    if (parts.length > 1) this.stats.staged++;
    for (const [i, batch] of batches.entries()) {
      const failure = await this.#send(socket, batch, checkOnly);
      if (!failure) continue;
      // Staged chains are unreachable, so taking them back out leaves the table as it was.
      if (i > 0) await this.#unstage(socket, parts.slice(0, i));
      throw failure;
    }
    if (!checkOnly) this.#remember(tx);
  }

  async #send(
    socket: NetfilterSocket,
    batch: EncodedBatch,
    checkOnly: boolean,
  ): Promise<NetlinkNftError | undefined> {
    // Answers left from an earlier batch (one that failed midway) must not be read as this one's.
    socket.drain();
    // The end message is the batch's last 20 bytes; without it the kernel validates and aborts.
    await socket.send(checkOnly ? batch.buffer.subarray(0, batch.buffer.length - 20) : batch.buffer);
    return firstError(socket.drain(), batch);
  }

  /** Deletes the chains committed staging transactions created (deleting a chain takes its rules). */
  async #unstage(socket: NetfilterSocket, stages: readonly Transaction[]): Promise<void> {
    const first = stages[0];
    if (!first) return;
    const undo = new Transaction(first.family, first.table);
    for (const stage of stages) {
      for (const { verb, object: o } of stage.operations) {
        if (o.kind === "chain" && verb === "add") undo.delete({ kind: "chain", name: o.name });
      }
    }
    const batch = this.#encode(undo);
    const failure = batch && (await this.#send(socket, batch, false));
    // Left behind, they are unreachable and the next full sync (which lists the table) deletes them.
    if (!batch || failure)
      this.#o.logger?.warn("taking staged nftables chains back out failed", { error: failure });
  }

  /** The transaction, or its staging transactions and then the rest (see stageChains). */
  async #staged(socket: NetfilterSocket, tx: Transaction): Promise<Transaction[]> {
    const staging = { ...DEFAULT_STAGING, ...this.#o.staging };
    // Cheap first look, before asking the kernel which chains it holds.
    if (stageableChains(tx, new Set()).length < staging.minChains) return [tx];
    const chains = await dump(socket, "chain", tx.family, tx.table);
    const split = stageChains(tx, {
      ...staging,
      kernelChains: new Set(chains.map((m) => objectName("chain", m))),
    });
    return split ? [...split.stages, split.main] : [tx];
  }

  /** Every part encoded, or undefined when one uses syntax the encoder does not speak. */
  #encodeAll(parts: readonly Transaction[]): EncodedBatch[] | undefined {
    const out: EncodedBatch[] = [];
    for (const part of parts) {
      const batch = this.#encode(part);
      if (!batch) return undefined;
      // Each encoder starts from a 1 MiB buffer; staged batches are a fraction of that and all wait
      // to be sent, so each keeps only its bytes.
      out.push(parts.length > 1 ? { ...batch, buffer: Buffer.from(batch.buffer) } : batch);
    }
    return out;
  }

  #encode(tx: Transaction): EncodedBatch | undefined {
    try {
      const batch = encodeTransaction(
        tx,
        this.#namer,
        (name) => this.#setTypes.get(name) ?? declaredType(tx, name),
        this.#seq,
      );
      this.#seq = (batch.lastSeq + 1) % 0x40000000;
      return batch;
    } catch (err) {
      if (!(err instanceof UnsupportedSyntax)) throw err;
      this.#o.logger?.info("nftables transaction sent with the nft binary", { reason: err.message });
      return undefined;
    }
  }

  #remember(tx: Transaction): void {
    for (const { verb, object: o } of tx.operations) {
      if ((o.kind === "set" || o.kind === "map") && o.type !== undefined && verb !== "delete")
        this.#setTypes.set(o.name, o.type);
    }
  }

  /** Names of the table's chains and named sets, not maps (none when it does not exist), as NftApplier's. */
  async listObjects(family: NFTFamily, table: string): Promise<{ chains: string[]; sets: string[] }> {
    const socket = await this.#open();
    if (!socket) return this.#nft.listObjects(family, table);
    const chains = await dump(socket, "chain", family, table);
    const sets = await dump(socket, "set", family, table);
    this.#namer.seed(
      `${family} ${table}`,
      sets.map((m) => objectName("set", m)),
    );
    return {
      chains: chains.map((m) => objectName("chain", m)),
      sets: sets.filter(isNamedSet).map((m) => objectName("set", m)),
    };
  }

  async deleteTable(family: NFTFamily, table: string): Promise<void> {
    await this.#nft.deleteTable(family, table);
  }

  close(): void {
    void this.#socket?.then((s) => s?.close());
    this.#socket = undefined;
  }
}

/** A set's type when this very transaction declares it (elements may come first in statements). */
function declaredType(tx: Transaction, name: string): string | undefined {
  for (const { object: o } of tx.operations) {
    if ((o.kind === "set" || o.kind === "map") && o.name === name && o.type !== undefined) return o.type;
  }
  return undefined;
}

function firstError(datagrams: readonly Buffer[], batch: EncodedBatch): NetlinkNftError | undefined {
  for (const d of datagrams) {
    for (const m of parseMessages(d)) {
      if (!isError(m)) continue;
      const { errno, seq } = errorOf(m);
      if (errno !== 0 && seq >= batch.firstSeq && seq <= batch.lastSeq)
        return new NetlinkNftError(errno, batch.describe(seq));
    }
  }
  return undefined;
}

let dumpSeq = 1 << 30;

async function dump(socket: NetfilterSocket, kind: DumpKind, family: NFTFamily, table: string) {
  await socket.send(dumpRequest(kind, family, table, ++dumpSeq));
  const progress = newDumpProgress();
  while (!progress.done) readDumpDatagram(progress, parseMessages(socket.receive()), table);
  if (progress.errno === 2) return [];
  if (progress.errno !== 0) throw new NetlinkNftError(progress.errno, `list ${kind}s of ${family} ${table}`);
  return progress.objects;
}

// The kernel's side of BPFMapStore: the maps the loader pinned, opened by path and written with batch operations,
// one syscall per step (BPF_MAP_UPDATE_BATCH, BPF_MAP_DELETE_BATCH). A map the kernel refuses batches on (an
// older kernel, or a map type without them) gets per-element calls instead, that map only; `writeMethod` says
// which the last write used.

import { join } from "node:path";
import type { IPFamily } from "@switchyard/basics";
import { kernelMapName, type MapName, maps, structLayout } from "../ebpf/layout.js";
import { type BPFMapStore, type MapWriteStep, stepSize } from "../ebpf/map-store.js";
import { errnoText, type Libbpf, loadLibbpf } from "./bpf-libbpf.js";
import { DEFAULT_PIN_ROOT } from "./bpf-loader.js";

const ENOENT = 2;
const ENOSPC = 28;
const EINVAL = 22;
const EOPNOTSUPP = 95;
const ENOTSUPP = 524;

/** struct bpf_map_batch_opts: its size, then elem_flags and flags, both 0. */
const BATCH_OPTS = (() => {
  const opts = Buffer.alloc(24);
  opts.writeBigUInt64LE(24n, 0);
  return opts;
})();

/** The batch lookup's resume token: a bucket index for hash maps; room to spare. */
const BATCH_TOKEN_SIZE = 64;
const DUMP_CHUNK = 8192;

/** A map operation the kernel refused: which map, which operation, and how far a batch got. */
export class BPFMapError extends Error {
  readonly errno: number;
  constructor(what: string, errno: number) {
    super(`eBPF map ${what}: ${errnoText(errno)}`);
    this.name = "BPFMapError";
    this.errno = Math.abs(errno);
  }
}

export type WriteMethod = "batch" | "per-element";

export class KernelBPFMapStore implements BPFMapStore {
  readonly #libbpf: Libbpf;
  readonly #pinRoot: string;
  readonly #fds = new Map<string, number>();
  /** Maps (by descriptor) the kernel refused a batch on: every later write to them goes element by element. */
  readonly #batchRefused = new Set<number>();
  #lastMethod: WriteMethod | undefined;

  /** Over `libbpf` as given (open() binds the real one; tests wrap it to refuse batches). */
  constructor(libbpf: Libbpf, pinRoot: string) {
    this.#libbpf = libbpf;
    this.#pinRoot = pinRoot;
  }

  /** A store over the maps pinned under `pinRoot` (loadSockPrograms pins them); they are opened on first use. */
  static async open(pinRoot = DEFAULT_PIN_ROOT): Promise<KernelBPFMapStore> {
    return new KernelBPFMapStore(await loadLibbpf(), pinRoot);
  }

  /** How the last write reached the kernel; undefined before any write with entries. */
  get writeMethod(): WriteMethod | undefined {
    return this.#lastMethod;
  }

  async write(family: IPFamily, steps: readonly MapWriteStep[]): Promise<void> {
    for (const step of steps) {
      const fd = this.#fd(family, step.map);
      const what = `${kernelMapName(maps[step.map], family)} ${step.op}`;
      if (step.op === "update") this.#update(fd, what, step);
      else this.#delete(fd, what, step);
    }
  }

  async dump(family: IPFamily, map: MapName): Promise<Array<[key: Buffer, value: Buffer]>> {
    const fd = this.#fd(family, map);
    const keySize = structLayout(maps[map].key, family).size;
    const valueSize = structLayout(maps[map].value, family).size;
    return (
      this.#dumpBatched(fd, keySize, valueSize) ??
      this.#dumpByKeys(fd, keySize, valueSize, kernelMapName(maps[map], family))
    );
  }

  /** Closes the maps' descriptors; the maps stay pinned. */
  close(): void {
    for (const fd of this.#fds.values()) this.#libbpf.close(fd);
    this.#fds.clear();
    this.#batchRefused.clear();
  }

  #fd(family: IPFamily, map: MapName): number {
    const name = kernelMapName(maps[map], family);
    let fd = this.#fds.get(name);
    if (fd === undefined) {
      const path = join(this.#pinRoot, name);
      fd = this.#libbpf.objGet(path);
      if (fd < 0) throw new BPFMapError(`${name}: no map pinned at ${path} (load the programs first)`, fd);
      this.#fds.set(name, fd);
    }
    return fd;
  }

  /** A rendered step's entries go to the kernel as packed; a hand-built one's are packed here. */
  #update(fd: number, what: string, step: MapWriteStep & { op: "update" }): void {
    const size = stepSize(step);
    if (size === 0) return;
    if (!this.#batchRefused.has(fd)) {
      const keys = step.batch?.keys ?? Buffer.concat(step.entries.map((e) => e[0]));
      const values = step.batch?.values ?? Buffer.concat(step.entries.map((e) => e[1]));
      const count = Uint32Array.of(size);
      const rc = this.#libbpf.updateBatch(fd, keys, values, count, BATCH_OPTS);
      if (rc === 0) {
        this.#lastMethod = "batch";
        return;
      }
      if (!this.#refusesBatch(fd, rc, count, size))
        throw new BPFMapError(`${what} (${count[0]} of ${size})`, rc);
    }
    this.#lastMethod = "per-element";
    for (const [key, value] of step.entries) {
      const rc = this.#libbpf.updateElem(fd, key, value, 0);
      if (rc < 0) throw new BPFMapError(what, rc);
    }
  }

  /** A key already gone is no error: the entry is not there, which is what the step asks. */
  #delete(fd: number, what: string, step: MapWriteStep & { op: "delete" }): void {
    const size = stepSize(step);
    if (size === 0) return;
    const batch = step.batch;
    // Keys from `from` on, packed: a rendered step's are already, so the views are built only if asked for.
    const packedFrom = (from: number): Buffer =>
      batch ? batch.keys.subarray(from * batch.keySize) : Buffer.concat(step.keys.slice(from));
    let from = 0;
    while (!this.#batchRefused.has(fd) && from < size) {
      const count = Uint32Array.of(size - from);
      const rc = this.#libbpf.deleteBatch(fd, packedFrom(from), count, BATCH_OPTS);
      if (rc === 0) {
        this.#lastMethod = "batch";
        return;
      }
      if (this.#refusesBatch(fd, rc, count, size - from)) break;
      if (-rc !== ENOENT) throw new BPFMapError(`${what} (${from + (count[0] ?? 0)} of ${size})`, rc);
      from += (count[0] ?? 0) + 1;
    }
    if (from >= size) {
      this.#lastMethod = "batch";
      return;
    }
    this.#lastMethod = "per-element";
    for (const key of step.keys.slice(from)) {
      const rc = this.#libbpf.deleteElem(fd, key);
      if (rc < 0 && -rc !== ENOENT) throw new BPFMapError(what, rc);
    }
  }

  /**
   * A "not supported" answer with the count untouched: the kernel (or this map type) has no batch operation and
   * never looked at the elements. One that failed at an element reports how many it did before it, always fewer.
   */
  #refusesBatch(fd: number, rc: number, count: Uint32Array, asked: number): boolean {
    const refused = count[0] === asked && [EINVAL, EOPNOTSUPP, ENOTSUPP].includes(-rc);
    if (refused) this.#batchRefused.add(fd);
    return refused;
  }

  /** BPF_MAP_LOOKUP_BATCH in chunks; null when the kernel has no batch lookup for this map. */
  #dumpBatched(fd: number, keySize: number, valueSize: number): Array<[Buffer, Buffer]> | null {
    const out: Array<[Buffer, Buffer]> = [];
    let chunk = DUMP_CHUNK;
    let token: Buffer | null = null;
    for (;;) {
      const next = Buffer.alloc(BATCH_TOKEN_SIZE);
      const keys = Buffer.alloc(chunk * keySize);
      const values = Buffer.alloc(chunk * valueSize);
      const count = Uint32Array.of(chunk);
      const rc = this.#libbpf.lookupBatch(fd, token, next, keys, values, count, BATCH_OPTS);
      const got = rc === 0 || -rc === ENOENT ? (count[0] ?? 0) : 0;
      for (let i = 0; i < got; i++) {
        out.push([
          keys.subarray(i * keySize, (i + 1) * keySize),
          values.subarray(i * valueSize, (i + 1) * valueSize),
        ]);
      }
      if (-rc === ENOENT) return out;
      if (rc === 0) {
        token = next;
        continue;
      }
      // One hash bucket holds more entries than the chunk: ask again with room for them.
      if (-rc === ENOSPC) chunk *= 2;
      else if (token === null && [EINVAL, EOPNOTSUPP, ENOTSUPP].includes(-rc)) return null;
      else throw new BPFMapError("lookup batch", rc);
    }
  }

  #dumpByKeys(fd: number, keySize: number, valueSize: number, name: string): Array<[Buffer, Buffer]> {
    const out: Array<[Buffer, Buffer]> = [];
    let key: Buffer | null = null;
    for (;;) {
      const next = Buffer.alloc(keySize);
      const rc = this.#libbpf.nextKey(fd, key, next);
      if (-rc === ENOENT) return out;
      if (rc < 0) throw new BPFMapError(`${name} next key`, rc);
      const value = Buffer.alloc(valueSize);
      // An entry deleted between the two calls is skipped.
      if (this.#libbpf.lookupElem(fd, next, value) === 0) out.push([next, value]);
      key = next;
    }
  }
}

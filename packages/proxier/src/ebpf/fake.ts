// An in-memory model of both families' maps, holding keys and values as bytes, for tests and tools. It refuses
// what the kernel refuses (a key or value of the wrong size, a delete of a missing key, an insert into a full
// map, a source range whose prefix is longer than its key) and, beyond that, any write after which a program
// could meet a dangling reference: a slot naming a missing backend, an entry naming a missing reverse NAT index,
// a count reaching past the slots present, a SOURCE_RANGES flag whose index has no range (every source dropped:
// the renderer sets the flag only over ranges, as kube-proxy writes no firewall without a valid range). The
// kernel runs a batch element by element, with programs running in between, so every element is checked, not
// just the end of a step. A refused step leaves the maps as they were before it; the steps before it stay.

import type { IPFamily } from "@switchyard/basics";
import { decodeStruct } from "./codec.js";
import { decodeContents, type MapContents, serviceEntryName } from "./contents.js";
import { type MapName, maps, structLayout } from "./layout.js";
import type { BPFMapStore, MapWriteStep } from "./map-store.js";
import { ReferenceIndex } from "./reference-index.js";

export type BPFMapErrorCode = "EINVAL" | "ENOENT" | "E2BIG" | "EDANGLING";

export class BPFMapError extends Error {
  readonly code: BPFMapErrorCode;
  constructor(code: BPFMapErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "BPFMapError";
    this.code = code;
  }
}

type Stored = readonly [key: Buffer, value: Buffer];
type FamilyMaps = Record<MapName, Map<string, Stored>>;

const MAP_NAMES = Object.keys(maps) as MapName[];

function emptyMaps(): FamilyMaps {
  return Object.fromEntries(MAP_NAMES.map((m) => [m, new Map()])) as FamilyMaps;
}

export class FakeBPFMaps implements BPFMapStore {
  readonly #maps: Record<IPFamily, FamilyMaps> = { IPv4: emptyMaps(), IPv6: emptyMaps() };
  readonly #refs: Record<IPFamily, ReferenceIndex> = {
    IPv4: new ReferenceIndex("IPv4"),
    IPv6: new ReferenceIndex("IPv6"),
  };
  readonly #maxEntries: Readonly<Partial<Record<MapName, number>>>;

  /**
   * `maxEntries`: a map's capacity. By default the proxy-owned maps have none (the loader sizes them from the
   * cluster) and the programs' own maps have the layout's defaultMaxEntries.
   */
  constructor(options: { readonly maxEntries?: Partial<Record<MapName, number>> } = {}) {
    this.#maxEntries = options.maxEntries ?? {};
  }

  async write(family: IPFamily, steps: readonly MapWriteStep[]): Promise<void> {
    this.writeSync(family, steps);
  }

  /** write, without the promise. */
  writeSync(family: IPFamily, steps: readonly MapWriteStep[]): void {
    steps.forEach((step, i) => {
      try {
        this.#writeStep(family, step);
      } catch (err) {
        if (err instanceof BPFMapError) err.message = `step ${i} (${step.op} ${step.map}): ${err.message}`;
        throw err;
      }
    });
  }

  async dump(family: IPFamily, map: MapName): Promise<Array<[key: Buffer, value: Buffer]>> {
    return this.dumpSync(family, map);
  }

  /** Every entry, copied; a hash map has no order, this one gives its keys' byte order. */
  dumpSync(family: IPFamily, map: MapName): Array<[key: Buffer, value: Buffer]> {
    return [...this.#maps[family][map].entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, [k, v]]) => [Buffer.from(k), Buffer.from(v)]);
  }

  /** The proxy-owned maps of one family, decoded. */
  contents(family: IPFamily): MapContents {
    const dump = (m: MapName) => this.dumpSync(family, m);
    return decodeContents(family, {
      services: dump("services"),
      backends: dump("backends"),
      revNat: dump("revNat"),
      sourceRange: dump("sourceRange"),
    });
  }

  /** Runs one step; on a refusal undoes what it wrote and throws. */
  #writeStep(family: IPFamily, step: MapWriteStep): void {
    const spec = maps[step.map];
    if (!spec) throw new BPFMapError("EINVAL", `no map ${String(step.map)}`);
    const undo: Array<[hex: string, old: Stored | undefined]> = [];
    const ops: Array<[Buffer, Buffer | undefined]> =
      step.op === "update" ? step.entries.map(([k, v]) => [k, v]) : step.keys.map((k) => [k, undefined]);
    try {
      for (const [key, value] of ops) undo.push(this.#writeOne(family, step.map, key, value));
    } catch (err) {
      for (const [hex, old] of undo.reverse()) this.#put(family, step.map, hex, old);
      throw err;
    }
  }

  /** Writes (value given) or deletes one element, checked; what to put back to undo it. */
  #writeOne(
    family: IPFamily,
    map: MapName,
    key: Buffer,
    value: Buffer | undefined,
  ): [string, Stored | undefined] {
    const spec = maps[map];
    const keySize = structLayout(spec.key, family).size;
    const valueSize = structLayout(spec.value, family).size;
    if (key.length !== keySize)
      throw new BPFMapError("EINVAL", `${map} key is ${keySize} bytes, got ${key.length}`);
    if (value && value.length !== valueSize) {
      throw new BPFMapError("EINVAL", `${map} value is ${valueSize} bytes, got ${value.length}`);
    }
    if (spec.kind === "lpm_trie") checkPrefixLength(key, keySize, map);
    const hex = key.toString("hex");
    const entries = this.#maps[family][map];
    const old = entries.get(hex);
    if (!value && !old)
      throw new BPFMapError("ENOENT", `${map}: no element ${this.#describe(family, map, key)}`);
    const capacity =
      this.#maxEntries[map] ?? (spec.ownedByProxy ? Number.POSITIVE_INFINITY : spec.defaultMaxEntries);
    if (value && !old && entries.size >= capacity)
      throw new BPFMapError("E2BIG", `${map} is full (${capacity})`);
    this.#put(family, map, hex, value ? [Buffer.from(key), Buffer.from(value)] : undefined);
    const dangling = this.#refs[family].check(map, key, value);
    if (dangling) {
      this.#put(family, map, hex, old);
      throw new BPFMapError("EDANGLING", dangling);
    }
    return [hex, old];
  }

  /** Sets or removes an element, keeping the reference index in step; no checks. */
  #put(family: IPFamily, map: MapName, hex: string, entry: Stored | undefined): void {
    const entries = this.#maps[family][map];
    const old = entries.get(hex);
    if (old) this.#refs[family].remove(map, old[0], old[1]);
    if (entry) {
      entries.set(hex, entry);
      this.#refs[family].add(map, entry[0], entry[1]);
    } else entries.delete(hex);
  }

  #describe(family: IPFamily, map: MapName, key: Buffer): string {
    if (map === "services") return serviceEntryName(decodeStruct(maps.services.key, family, key));
    return JSON.stringify(decodeStruct(maps[map].key, family, key), (_, v) =>
      typeof v === "bigint" ? `${v}` : v,
    );
  }
}

/** An LPM trie key's prefix length (its first u32) counts the bits after it; the kernel refuses a longer one. */
function checkPrefixLength(key: Buffer, keySize: number, map: MapName): void {
  const bits = key.readUInt32LE(0);
  if (bits > (keySize - 4) * 8) throw new BPFMapError("EINVAL", `${map}: prefix length ${bits} is too long`);
}

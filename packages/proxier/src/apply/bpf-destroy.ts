// Ends stale socket-balanced UDP flows with the socket-destroy iterator (bpf/sock-destroy.c, built into
// dist/ebpf/switchyard-sock-destroy.bpf.o). Loaded once per process: it shares the maps the socket loader pinned (it
// reads lb*_reverse_sk, which the socket programs write, and lb*_stale_flows, which this side fills), while its
// programs and their iterator links are held, not pinned, and go with the process.
//
// A run: the flows go into lb*_stale_flows; an iterator is created in each network namespace of the processes below
// the cgroup the socket programs serve (an iterator sees its creator's namespace only) and read to its end, which
// runs the program over every UDP socket there; the count the program kept per flow is read back, and the entries
// deleted. More flows than the map holds take several runs.

import { closeSync, readSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IPFamily } from "@switchyard/basics";
import { encodeStruct } from "../ebpf/codec.js";
import { kernelMapName, type MapSpec, maps, staleFlowKey, structLayout } from "../ebpf/layout.js";
import type { SocketEnder, SocketEndResult } from "../ebpf/socket-ender.js";
import type { StaleFlow } from "../ebpf/stale-flows.js";
import { defaultCgroupPath } from "./bpf-fs.js";
import { errnoText, type Handle, type Libbpf, loadLibbpf } from "./bpf-libbpf.js";
import { DEFAULT_PIN_ROOT, loadError, openAndLoadObject } from "./bpf-loader.js";
import {
  cgroupNetworkNamespaces,
  inNetworkNamespace,
  type NetnsRef,
  NetnsReturnError,
} from "./cgroup-netns.js";

export const DEFAULT_DESTROY_OBJECT_PATH = fileURLToPath(
  new URL("../../dist/ebpf/switchyard-sock-destroy.bpf.o", import.meta.url),
);

/** The iterator program of each family (the C function's name). */
export const DESTROY_PROGRAMS: Readonly<Record<IPFamily, string>> = {
  IPv4: "end_stale_udp4",
  IPv6: "end_stale_udp6",
};

const ALL_FAMILIES: readonly IPFamily[] = ["IPv4", "IPv6"];

export interface SocketEnderOptions {
  readonly objectPath?: string;
  /** Where loadSockPrograms pinned the maps; they must be there. */
  readonly pinRoot?: string;
  /** The cgroup the socket programs are attached to: its processes' namespaces are looked through. */
  readonly cgroupPath?: string;
  /** The families whose socket programs were loaded; both by default. */
  readonly families?: readonly IPFamily[];
}

/** One family's iterator and the map its runs read. */
interface FamilyIterator {
  readonly link: Handle;
  readonly linkFd: number;
  readonly flowsFd: number;
  /** lb*_stale_flows's size: the flows one run takes. */
  readonly capacity: number;
}

const ENOENT = 2;

export class KernelSocketEnder implements SocketEnder {
  readonly #libbpf: Libbpf;
  readonly #obj: Handle;
  readonly #iterators: ReadonlyMap<IPFamily, FamilyIterator>;
  readonly #cgroupPath: string;
  #closed = false;

  private constructor(libbpf: Libbpf, obj: Handle, iterators: Map<IPFamily, FamilyIterator>, cgroup: string) {
    this.#libbpf = libbpf;
    this.#obj = obj;
    this.#iterators = iterators;
    this.#cgroupPath = cgroup;
  }

  /** Loads the object over the pinned maps (after loadSockPrograms) and attaches each family's iterator. */
  static async open(options: SocketEnderOptions = {}): Promise<KernelSocketEnder> {
    const libbpf = await loadLibbpf();
    const pinRoot = options.pinRoot ?? DEFAULT_PIN_ROOT;
    const families = options.families ?? ALL_FAMILIES;
    const cgroupPath = options.cgroupPath ?? defaultCgroupPath();
    const objectPath = options.objectPath ?? DEFAULT_DESTROY_OBJECT_PATH;
    const obj = openAndLoadObject(libbpf, objectPath, pinRoot, (o) =>
      shareMaps(libbpf, o, pinRoot, families),
    );
    const iterators = new Map<IPFamily, FamilyIterator>();
    try {
      for (const family of families) {
        const it = attachIterator(libbpf, obj, family);
        iterators.set(family, it);
        // Entries an earlier process left when it stopped in the middle of a run.
        clearMap(libbpf, it.flowsFd, structLayout(staleFlowKey, family).size);
      }
    } catch (e) {
      for (const it of iterators.values()) libbpf.destroyLink(it.link);
      libbpf.closeObject(obj);
      throw e;
    }
    return new KernelSocketEnder(libbpf, obj, iterators, cgroupPath);
  }

  async end(family: IPFamily, flows: readonly StaleFlow[]): Promise<SocketEndResult> {
    return this.endSync(family, flows);
  }

  /** end, without the promise: one synchronous pass (the thread must not run other code between setns calls). */
  endSync(family: IPFamily, flows: readonly StaleFlow[]): SocketEndResult {
    if (this.#closed) throw new Error("the socket-destroy iterator was closed");
    const it = this.#iterators.get(family);
    if (!it) throw new Error(`no socket-destroy iterator for ${family} (not loaded)`);
    if (flows.length === 0) return { ended: 0, endedByFlow: [], namespaces: 0, errors: [] };
    const namespaces = cgroupNetworkNamespaces(this.#cgroupPath);
    const errors: Error[] = [];
    const endedByFlow: Array<{ flow: StaleFlow; ended: number }> = [];
    for (let at = 0; at < flows.length; at += it.capacity) {
      const chunk = flows.slice(at, at + it.capacity);
      const keys = chunk.map((flow) => encodeStruct(staleFlowKey, family, flow));
      try {
        this.#fill(it.flowsFd, keys);
        for (const ns of namespaces) this.#runIn(it, ns, errors);
        keys.forEach((key, i) => {
          const ended = this.#endedOf(it.flowsFd, key);
          if (ended > 0) endedByFlow.push({ flow: chunk[i] as StaleFlow, ended });
        });
      } finally {
        for (const key of keys) this.#libbpf.deleteElem(it.flowsFd, key);
      }
    }
    const ended = endedByFlow.reduce((sum, f) => sum + f.ended, 0);
    return { ended, endedByFlow, namespaces: namespaces.length, errors };
  }

  /** Detaches the iterators and closes the object; the pinned maps stay. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const it of this.#iterators.values()) this.#libbpf.destroyLink(it.link);
    this.#libbpf.closeObject(this.#obj);
  }

  #fill(fd: number, keys: readonly Buffer[]): void {
    const zero = Buffer.alloc(4);
    for (const key of keys) {
      const rc = this.#libbpf.updateElem(fd, key, zero, 0);
      if (rc < 0) throw new Error(`eBPF: writing a stale flow: ${errnoText(rc)}`);
    }
  }

  #endedOf(fd: number, key: Buffer): number {
    const value = Buffer.alloc(4);
    return this.#libbpf.lookupElem(fd, key, value) === 0 ? value.readUInt32LE(0) : 0;
  }

  /** One run in one namespace; a namespace gone meanwhile is skipped, any other failure recorded. */
  #runIn(it: FamilyIterator, ns: NetnsRef, errors: Error[]): void {
    let fd = -1;
    try {
      fd = inNetworkNamespace(this.#libbpf, ns.path, () => this.#libbpf.iterCreate(it.linkFd));
      if (fd < 0) throw new Error(`eBPF: creating a socket iterator in ${ns.path}: ${errnoText(fd)}`);
      drain(fd);
    } catch (e) {
      if (e instanceof NetnsReturnError) throw e;
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") errors.push(e as Error);
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }
}

/** Reads an iterator to its end: the program runs over the sockets as the reads ask (it writes nothing). */
function drain(fd: number): void {
  const buf = Buffer.alloc(256);
  while (readSync(fd, buf, 0, buf.length, null) > 0);
}

/**
 * Points the object's maps at the pinned ones: libbpf reuses a map pinned by its name when kind and sizes agree,
 * so each takes the pinned map's size. The other family's maps are not created nor its program loaded.
 */
function shareMaps(libbpf: Libbpf, obj: Handle, pinRoot: string, families: readonly IPFamily[]): void {
  for (const family of ALL_FAMILIES) {
    const on = families.includes(family);
    for (const spec of Object.values(maps) as MapSpec[]) {
      const name = kernelMapName(spec, family);
      const map = libbpf.findMap(obj, name);
      if (map === null) throw loadError(libbpf, `the object has no map ${name}`);
      const size = on ? pinnedMaxEntries(libbpf, join(pinRoot, name)) : 0;
      if (on && size === null)
        throw new Error(`eBPF: no map pinned at ${join(pinRoot, name)} (load the socket programs first)`);
      const rc = on ? libbpf.setMaxEntries(map, size as number) : libbpf.setAutocreate(map, false);
      if (rc < 0) throw loadError(libbpf, `configuring map ${name}: ${errnoText(rc)}`);
    }
    const prog = libbpf.findProgram(obj, DESTROY_PROGRAMS[family]);
    if (prog === null) throw loadError(libbpf, `the object has no program ${DESTROY_PROGRAMS[family]}`);
    if (!on) libbpf.setAutoload(prog, false);
  }
}

/** A pinned map's max_entries, or null when nothing is pinned there. */
function pinnedMaxEntries(libbpf: Libbpf, path: string): number | null {
  const fd = libbpf.objGet(path);
  if (fd < 0) return null;
  try {
    return maxEntriesOf(libbpf, fd);
  } finally {
    libbpf.close(fd);
  }
}

/** A map's max_entries, from the kernel's struct bpf_map_info; null when the kernel does not say. */
function maxEntriesOf(libbpf: Libbpf, fd: number): number | null {
  const info = Buffer.alloc(96);
  if (libbpf.objInfo(fd, info, Uint32Array.of(info.length)) !== 0) return null;
  return info.readUInt32LE(16);
}

function attachIterator(libbpf: Libbpf, obj: Handle, family: IPFamily): FamilyIterator {
  const name = DESTROY_PROGRAMS[family];
  const link = libbpf.attachIter(libbpf.findProgram(obj, name) as Handle);
  if (link === null) throw loadError(libbpf, `attaching ${name}: ${errnoText(libbpf.errno())}`);
  const flows = libbpf.findMap(obj, kernelMapName(maps.staleFlows, family)) as Handle;
  const flowsFd = libbpf.mapFd(flows);
  const capacity = maxEntriesOf(libbpf, flowsFd) ?? maps.staleFlows.defaultMaxEntries;
  return { link, linkFd: libbpf.linkFd(link), flowsFd, capacity };
}

/** Deletes every entry of a map (a bounded number of them: the map is small). */
function clearMap(libbpf: Libbpf, fd: number, keySize: number): void {
  const key = Buffer.alloc(keySize);
  for (let guard = 0; guard < 1 << 20; guard++) {
    if (libbpf.nextKey(fd, null, key) !== 0) return;
    const rc = libbpf.deleteElem(fd, key);
    if (rc < 0 && -rc !== ENOENT) throw new Error(`eBPF: clearing the stale flows: ${errnoText(rc)}`);
  }
}

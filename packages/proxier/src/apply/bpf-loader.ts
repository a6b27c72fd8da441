// Loads the socket load-balancing programs (dist/ebpf/switchyard-sock.bpf.o) with libbpf and attaches them to a
// cgroup2 directory, so that every process below it is served. What must outlive the proxy is pinned under one
// root: the maps (by the name layout.ts gives them; the programs' definitions ask libbpf to pin them) and the
// cgroup links, under <root>/links/<program>. A later start finds a pinned link and swaps the program inside
// it (BPF_LINK_UPDATE), so no connect ever runs without a program; removeSockPrograms detaches and unpins it all.

import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IPFamily } from "@switchyard/basics";
import { kernelMapName, type MapName, type MapSpec, mapFlagsOf, maps, structLayout } from "../ebpf/layout.js";
import { defaultCgroupPath, ensureBpffs } from "./bpf-fs.js";
import { errnoText, type Handle, type Libbpf, loadLibbpf } from "./bpf-libbpf.js";

export const DEFAULT_PIN_ROOT = "/sys/fs/bpf/switchyard";

/** The build's object (bpf/build.mjs), found the same way from src/apply (tests) and dist/apply. */
export const DEFAULT_OBJECT_PATH = fileURLToPath(
  new URL("../../dist/ebpf/switchyard-sock.bpf.o", import.meta.url),
);

export interface SockProgram {
  /** The C function's name, which libbpf and the kernel know the program by. */
  readonly name: string;
  /** The kernel's enum bpf_attach_type, for bpf_prog_query. */
  readonly attachType: number;
}

export const SOCK_PROGRAMS: Readonly<Record<IPFamily, readonly SockProgram[]>> = {
  IPv4: [
    { name: "connect4", attachType: 10 },
    { name: "sendmsg4", attachType: 14 },
    { name: "recvmsg4", attachType: 19 },
    { name: "getpeername4", attachType: 29 },
  ],
  IPv6: [
    { name: "connect6", attachType: 11 },
    { name: "sendmsg6", attachType: 15 },
    { name: "recvmsg6", attachType: 20 },
    { name: "getpeername6", attachType: 30 },
  ],
};

const ALL_FAMILIES: readonly IPFamily[] = ["IPv4", "IPv6"];

export interface SockLoadOptions {
  readonly objectPath?: string;
  /** The cgroup2 directory to attach to; the cgroup2 mount's root by default (every process of the host). */
  readonly cgroupPath?: string;
  readonly pinRoot?: string;
  /** The families whose programs and maps are loaded; both by default. The other's pins are removed. */
  readonly families?: readonly IPFamily[];
  /** Each map's size (both families), from the cluster's size; layout.ts's defaultMaxEntries otherwise. */
  readonly maxEntries?: Partial<Record<MapName, number>>;
}

export interface SockLoadResult {
  readonly pinRoot: string;
  readonly cgroupPath: string;
  /** Each program: attached anew, or replaced inside the link a previous start pinned. */
  readonly programs: Readonly<Record<string, "attached" | "replaced">>;
  /** Pinned maps dropped because their kind, struct sizes or size changed: they start empty. */
  readonly recreatedMaps: readonly string[];
  readonly elapsedMs: number;
}

/** A failure to open or load the object; the message holds libbpf's last words and the verifier's log. */
export class BPFLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BPFLoadError";
  }
}

export const linksDir = (pinRoot: string) => join(pinRoot, "links");
/** The tc programs' links (bpf-tc.ts), one per device: <root>/tc/<device>-ingress. */
export const tcLinksDir = (pinRoot: string) => join(pinRoot, "tc");
/** The XDP programs' links (bpf-xdp.ts), one per accelerated device: <root>/xdp/<device>. */
export const xdpLinksDir = (pinRoot: string) => join(pinRoot, "xdp");

/** Loads, attaches and pins the programs of `options.families`; see the file's comment. */
export async function loadSockPrograms(options: SockLoadOptions = {}): Promise<SockLoadResult> {
  const started = performance.now();
  const libbpf = await loadLibbpf();
  const pinRoot = options.pinRoot ?? DEFAULT_PIN_ROOT;
  const families = options.families ?? ALL_FAMILIES;
  const cgroupPath = options.cgroupPath ?? defaultCgroupPath();
  const sizes = mapSizes(options.maxEntries);
  ensureBpffs(pinRoot, libbpf);
  mkdirSync(linksDir(pinRoot), { recursive: true });
  const recreatedMaps = dropStaleMapPins(libbpf, pinRoot, families, sizes);
  const obj = openAndLoadObject(libbpf, options.objectPath ?? DEFAULT_OBJECT_PATH, pinRoot, (o) =>
    configure(libbpf, o, families, sizes),
  );
  try {
    const programs = attachAll(libbpf, obj, pinRoot, cgroupPath, families);
    return { pinRoot, cgroupPath, programs, recreatedMaps, elapsedMs: performance.now() - started };
  } finally {
    libbpf.closeObject(obj);
  }
}

function mapSizes(given: SockLoadOptions["maxEntries"] = {}): Record<MapName, number> {
  const sizes = {} as Record<MapName, number>;
  for (const [name, spec] of Object.entries(maps) as [MapName, MapSpec][]) {
    const size = given[name] ?? spec.defaultMaxEntries;
    if (!Number.isInteger(size) || size < 1)
      throw new Error(`eBPF map ${name}: max entries ${size} is not valid`);
    sizes[name] = size;
  }
  return sizes;
}

// ---- maps ----

const MAP_TYPES = { hash: 1, lru_hash: 9, lpm_trie: 11 } as const;

/** What a pinned map must be for libbpf to reuse it: the kernel's struct bpf_map_info, its first fields. */
function pinnedMapFits(libbpf: Libbpf, path: string, spec: MapSpec, family: IPFamily, size: number): boolean {
  const fd = libbpf.objGet(path);
  if (fd < 0) return false;
  try {
    const info = Buffer.alloc(96);
    if (libbpf.objInfo(fd, info, Uint32Array.of(info.length)) !== 0) return false;
    return (
      info.readUInt32LE(0) === MAP_TYPES[spec.kind] &&
      info.readUInt32LE(8) === structLayout(spec.key, family).size &&
      info.readUInt32LE(12) === structLayout(spec.value, family).size &&
      info.readUInt32LE(16) === size &&
      info.readUInt32LE(20) === mapFlagsOf(spec)
    );
  } finally {
    libbpf.close(fd);
  }
}

/**
 * Unpins every map libbpf could not reuse (another kind, struct or size than this start asks for) and those of
 * families no longer loaded. Programs still running keep their old map until their link is updated.
 */
function dropStaleMapPins(
  libbpf: Libbpf,
  pinRoot: string,
  families: readonly IPFamily[],
  sizes: Record<MapName, number>,
): string[] {
  const dropped: string[] = [];
  for (const family of ALL_FAMILIES) {
    for (const [name, spec] of Object.entries(maps) as [MapName, MapSpec][]) {
      const path = join(pinRoot, kernelMapName(spec, family));
      if (!existsSync(path)) continue;
      if (families.includes(family) && pinnedMapFits(libbpf, path, spec, family, sizes[name])) continue;
      unlinkSync(path);
      dropped.push(kernelMapName(spec, family));
    }
  }
  return dropped;
}

// ---- the object ----

const LOG_SIZE = 4 << 20;

/**
 * Opens the object at `objectPath` with its maps pinned under `pinRoot`, lets `configure` set it up (sizes, which
 * programs load), and loads it through the verifier; a refusal carries libbpf's words and the verifier's log.
 * Every object of ours (socket, tc, socket-destroy) is opened this one way.
 */
export function openAndLoadObject(
  libbpf: Libbpf,
  objectPath: string,
  pinRoot: string,
  configure: (obj: Handle) => void,
): Handle {
  const log = libbpf.allocLog(LOG_SIZE);
  try {
    libbpf.takeMessages();
    const obj = libbpf.openObject(objectPath, { pinRoot, log, logSize: LOG_SIZE });
    if (obj === null) throw loadError(libbpf, `cannot open ${objectPath}: ${errnoText(libbpf.errno())}`);
    try {
      configure(obj);
      const rc = libbpf.loadObject(obj);
      if (rc < 0)
        throw loadError(libbpf, `loading ${objectPath} failed: ${errnoText(rc)}`, libbpf.readLog(log));
      return obj;
    } catch (e) {
      libbpf.closeObject(obj);
      throw e;
    }
  } finally {
    libbpf.freeLog(log);
  }
}

/** Sizes the maps of the families loaded; the other family's maps are not created nor its programs loaded. */
function configure(
  libbpf: Libbpf,
  obj: Handle,
  families: readonly IPFamily[],
  sizes: Record<MapName, number>,
) {
  for (const family of ALL_FAMILIES) {
    const on = families.includes(family);
    for (const [name, spec] of Object.entries(maps) as [MapName, MapSpec][]) {
      const map = libbpf.findMap(obj, kernelMapName(spec, family));
      if (map === null) throw loadError(libbpf, `the object has no map ${kernelMapName(spec, family)}`);
      const rc = on ? libbpf.setMaxEntries(map, sizes[name]) : libbpf.setAutocreate(map, false);
      if (rc < 0) throw loadError(libbpf, `configuring map ${kernelMapName(spec, family)}: ${errnoText(rc)}`);
    }
    for (const program of SOCK_PROGRAMS[family]) {
      const prog = libbpf.findProgram(obj, program.name);
      if (prog === null) throw loadError(libbpf, `the object has no program ${program.name}`);
      if (!on) libbpf.setAutoload(prog, false);
    }
  }
}

/** The verifier's log is long: its end says what it refused. */
const LOG_TAIL = 8000;

export function loadError(libbpf: Libbpf, what: string, verifierLog = ""): BPFLoadError {
  const said = libbpf.takeMessages();
  const parts = [`eBPF: ${what}`];
  if (said.length > 0) parts.push(`libbpf said:\n${said.join("\n")}`);
  const log = verifierLog.trim();
  if (log) parts.push(`verifier log${log.length > LOG_TAIL ? " (end)" : ""}:\n${log.slice(-LOG_TAIL)}`);
  return new BPFLoadError(parts.join("\n"));
}

// ---- links ----

function attachAll(
  libbpf: Libbpf,
  obj: Handle,
  pinRoot: string,
  cgroupPath: string,
  families: readonly IPFamily[],
): Record<string, "attached" | "replaced"> {
  const cgroupId = statSync(cgroupPath, { bigint: true }).ino;
  const cgroupFd = openSync(cgroupPath, "r");
  const done: Record<string, "attached" | "replaced"> = {};
  try {
    for (const family of ALL_FAMILIES) {
      for (const program of SOCK_PROGRAMS[family]) {
        const pin = join(linksDir(pinRoot), program.name);
        if (!families.includes(family)) detachPinnedLink(libbpf, pin);
        else done[program.name] = attachOne(libbpf, obj, program, pin, { fd: cgroupFd, id: cgroupId });
      }
    }
  } finally {
    closeSync(cgroupFd);
  }
  return done;
}

/** The cgroup a pinned link is attached to and at which hook: struct bpf_link_info's cgroup member. */
function linkTarget(libbpf: Libbpf, link: Handle): { cgroupId: bigint; attachType: number } | null {
  const info = Buffer.alloc(64);
  if (libbpf.objInfo(libbpf.linkFd(link), info, Uint32Array.of(info.length)) !== 0) return null;
  const BPF_LINK_TYPE_CGROUP = 3;
  if (info.readUInt32LE(0) !== BPF_LINK_TYPE_CGROUP) return null;
  return { cgroupId: info.readBigUInt64LE(16), attachType: info.readUInt32LE(24) };
}

/**
 * Replaces the program inside the link pinned at `pin` when it serves the same cgroup and hook; otherwise attaches
 * anew first and only then drops the old link, so the hook is never left empty (for that moment both run, and
 * the second finds a backend address, no frontend, and leaves it).
 */
function attachOne(
  libbpf: Libbpf,
  obj: Handle,
  program: SockProgram,
  pin: string,
  cgroup: { fd: number; id: bigint },
): "attached" | "replaced" {
  const prog = libbpf.findProgram(obj, program.name) as Handle;
  const old = existsSync(pin) ? libbpf.openLink(pin) : null;
  if (old !== null) {
    try {
      const target = linkTarget(libbpf, old);
      const same = target?.cgroupId === cgroup.id && target.attachType === program.attachType;
      if (same && libbpf.updateLinkProgram(old, prog) === 0) return "replaced";
    } finally {
      libbpf.destroyLink(old);
    }
  }
  const link = libbpf.attachCgroup(prog, cgroup.fd);
  if (link === null) throw loadError(libbpf, `attaching ${program.name}: ${errnoText(libbpf.errno())}`);
  try {
    if (existsSync(pin)) detachPinnedLink(libbpf, pin);
    const rc = libbpf.pinLink(link, pin);
    if (rc < 0) throw loadError(libbpf, `pinning ${program.name}'s link at ${pin}: ${errnoText(rc)}`);
  } finally {
    // Closes our handle only: a pinned link stays attached, an unpinned one goes with it.
    libbpf.destroyLink(link);
  }
  return "attached";
}

/**
 * Detaches the link pinned at `pin` at once (BPF_LINK_DETACH) and unpins it. Without libbpf the unpinning alone
 * drops the link's last reference, and the kernel detaches it a moment later.
 */
export function detachPinnedLink(libbpf: Libbpf | null, pin: string): void {
  if (!existsSync(pin)) return;
  const fd = libbpf ? libbpf.objGet(pin) : -1;
  if (libbpf && fd >= 0) {
    libbpf.detachLink(fd);
    libbpf.close(fd);
  }
  unlinkSync(pin);
}

// ---- removal ----

export interface SockRemoval {
  readonly links: readonly string[];
  readonly maps: readonly string[];
}

/**
 * Detaches every program linked under `pinRoot` and unpins its links and maps, then removes the directory: what
 * `--cleanup`, and every other mode at start-up, call. Nothing pinned there: nothing to do (libbpf is not even
 * loaded); libbpf missing: the pins are removed all the same.
 */
export async function removeSockPrograms(pinRoot = DEFAULT_PIN_ROOT): Promise<SockRemoval> {
  if (!existsSync(pinRoot)) return { links: [], maps: [] };
  const libbpf = await loadLibbpf().catch(() => null);
  const links: string[] = [];
  for (const dir of [linksDir(pinRoot), tcLinksDir(pinRoot), xdpLinksDir(pinRoot)]) {
    const names = existsSync(dir) ? readdirSync(dir) : [];
    for (const name of names) detachPinnedLink(libbpf, join(dir, name));
    links.push(...names);
  }
  const pinnedMaps = readdirSync(pinRoot).filter((name) => !["links", "tc", "xdp"].includes(name));
  // The maps, and anything an older version left here: the directory is ours alone.
  rmSync(pinRoot, { recursive: true, force: true });
  return { links, maps: pinnedMaps };
}

// Loads the tc program (dist/ebpf/switchyard-tc.bpf.o) that balances traffic from outside the node, and attaches
// it to the ingress of each external device the caller names through a tcx link (kernel 6.6+), pinned at
// <root>/tc/<device>-ingress beside the socket programs' links. tcx rather than a clsact qdisc with a netlink
// filter: a link is pinned and swapped in place (BPF_LINK_UPDATE) like the socket programs' cgroup links, so a
// restart never leaves a device without the program; it sits beside other tcx or tc programs (Cilium's, a CNI's)
// without touching their qdisc; and it goes with its device. The object shares the socket programs' maps, pinned
// by name under the same root: load the socket programs first, and the sizes follow theirs.
//
// The program hands flows to backends through conntrack entries with NAT information, which the kernel applies
// only while its NAT hooks are on in the namespace: every start makes sure of them (bpf-tc-nat-hooks.ts).
// With acceleration, the XDP program does the same ahead of it on the same devices (bpf-xdp.ts), from an object
// of its own that shares these maps.

import { existsSync, mkdirSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IPFamily } from "@switchyard/basics";
import { encodeStruct } from "../ebpf/codec.js";
import {
  kernelMapName,
  type MapName,
  type MapSpec,
  maps,
  masqueradeKey,
  masqueradeValue,
} from "../ebpf/layout.js";
import { ensureBpffs } from "./bpf-fs.js";
import { errnoText, type Handle, type Libbpf, loadLibbpf } from "./bpf-libbpf.js";
import {
  DEFAULT_PIN_ROOT,
  detachPinnedLink,
  loadError,
  openAndLoadObject,
  tcLinksDir,
  xdpLinksDir,
} from "./bpf-loader.js";
import { KernelBPFMapStore } from "./bpf-map-store.js";
import { ensureNatHooks, removeNatHooks } from "./bpf-tc-nat-hooks.js";
import {
  attachXdpPrograms,
  detachXdpLinks,
  XDP_OBJECT_PATH,
  XDP_PROGRAM,
  type XdpAcceleration,
  type XdpAttachment,
} from "./bpf-xdp.js";
import { type Exec, realExec } from "./exec.js";

/** The build's object (bpf/build.mjs), found the same way from src/apply (tests) and dist/apply. */
export const TC_OBJECT_PATH = fileURLToPath(new URL("../../dist/ebpf/switchyard-tc.bpf.o", import.meta.url));

/** The C function's name, which libbpf and the kernel know the program by. */
export const TC_PROGRAM = "tc_ingress";

const BPF_TCX_INGRESS = 46;
const BPF_LINK_TYPE_TCX = 11;

export interface TcLoadOptions {
  /** The node's external devices: traffic from outside arrives through them. */
  readonly devices: readonly string[];
  /**
   * The node's address per family that traffic from outside gets as its source on the way to a backend (unless
   * its service is EXTERNAL_LOCAL). A family without one is not masqueraded: its backends see the client.
   */
  readonly masquerade?: Partial<Record<IPFamily, string>>;
  readonly objectPath?: string;
  readonly pinRoot?: string;
  /** Sizes of maps not pinned yet (a pinned map keeps its size); layout.ts's defaultMaxEntries otherwise. */
  readonly maxEntries?: Partial<Record<MapName, number>>;
  /** Runs nft for the NAT hooks: in the namespace the program's devices are in. */
  readonly exec?: Exec;
  /** The XDP program on the same devices (bpf-xdp.ts); "disabled" by default. */
  readonly acceleration?: XdpAcceleration;
  readonly xdpObjectPath?: string;
}

export interface TcLoadResult {
  readonly pinRoot: string;
  /** Each device: attached anew, or the program replaced inside the link a previous start pinned. */
  readonly devices: Readonly<Record<string, "attached" | "replaced">>;
  /** Devices a previous start attached to and this one was not given: detached. */
  readonly detached: readonly string[];
  /** The XDP program per device (none when acceleration is disabled), and the XDP links detached. */
  readonly xdp: Readonly<Record<string, XdpAttachment>>;
  readonly xdpDetached: readonly string[];
  readonly elapsedMs: number;
}

const pinOf = (pinRoot: string, device: string) => join(tcLinksDir(pinRoot), `${device}-ingress`);

/** Loads the object, writes the masquerade addresses and attaches to every device; see the file's comment. */
export async function loadTcPrograms(options: TcLoadOptions): Promise<TcLoadResult> {
  const started = performance.now();
  const libbpf = await loadLibbpf();
  const pinRoot = options.pinRoot ?? DEFAULT_PIN_ROOT;
  const targets = resolveDevices(libbpf, options.devices);
  ensureBpffs(pinRoot, libbpf);
  mkdirSync(tcLinksDir(pinRoot), { recursive: true });
  await ensureNatHooks(options.exec ?? realExec);
  const obj = openLbObject(
    libbpf,
    options.objectPath ?? TC_OBJECT_PATH,
    pinRoot,
    options.maxEntries ?? {},
    TC_PROGRAM,
  );
  try {
    await writeMasquerade(libbpf, pinRoot, options.masquerade ?? {});
    const progFd = libbpf.programFd(libbpf.findProgram(obj, TC_PROGRAM) as Handle);
    const devices: Record<string, "attached" | "replaced"> = {};
    for (const [device, ifindex] of targets) {
      devices[device] = attachDevice(libbpf, progFd, pinOf(pinRoot, device), ifindex);
    }
    const detached = detachOthers(libbpf, pinRoot, new Set(targets.keys()));
    const xdp = accelerate(libbpf, options, pinRoot, targets);
    return {
      pinRoot,
      devices,
      detached,
      xdp: xdp.devices,
      xdpDetached: xdp.detached,
      elapsedMs: performance.now() - started,
    };
  } finally {
    libbpf.closeObject(obj);
  }
}

/** The XDP program on the devices as `options.acceleration` says; disabled: no XDP link left. */
function accelerate(
  libbpf: Libbpf,
  options: TcLoadOptions,
  pinRoot: string,
  targets: ReadonlyMap<string, number>,
): { devices: Record<string, XdpAttachment>; detached: string[] } {
  const acceleration = options.acceleration ?? "disabled";
  if (acceleration === "disabled") return { devices: {}, detached: detachXdpLinks(libbpf, pinRoot) };
  const objectPath = options.xdpObjectPath ?? XDP_OBJECT_PATH;
  const obj = openLbObject(libbpf, objectPath, pinRoot, options.maxEntries ?? {}, XDP_PROGRAM);
  try {
    const progFd = libbpf.programFd(libbpf.findProgram(obj, XDP_PROGRAM) as Handle);
    return attachXdpPrograms(libbpf, progFd, pinRoot, targets, acceleration);
  } finally {
    libbpf.closeObject(obj);
  }
}

/** Each device's index in this thread's network namespace; throws before anything is touched when one is missing. */
function resolveDevices(libbpf: Libbpf, devices: readonly string[]): Map<string, number> {
  const targets = new Map<string, number>();
  for (const device of devices) {
    if (device.includes("/") || device === "." || device === "..")
      throw new Error(`eBPF tc: bad device ${device}`);
    const ifindex = libbpf.ifNameToIndex(device);
    if (ifindex === 0) throw new Error(`eBPF tc: no device ${device} in this network namespace`);
    targets.set(device, ifindex);
  }
  return targets;
}

// ---- the object ----

/** max_entries of the map pinned at `path` (struct bpf_map_info), or undefined when none is. */
function pinnedMaxEntries(libbpf: Libbpf, path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const fd = libbpf.objGet(path);
  if (fd < 0) return undefined;
  try {
    const info = Buffer.alloc(96);
    return libbpf.objInfo(fd, info, Uint32Array.of(info.length)) === 0 ? info.readUInt32LE(16) : undefined;
  } finally {
    libbpf.close(fd);
  }
}

/** The tc or XDP object, loaded over the pinned maps, with its `program`. */
function openLbObject(
  libbpf: Libbpf,
  objectPath: string,
  pinRoot: string,
  given: Partial<Record<MapName, number>>,
  program: string,
): Handle {
  return openAndLoadObject(libbpf, objectPath, pinRoot, (obj) => {
    sizeMaps(libbpf, obj, pinRoot, given);
    if (libbpf.findProgram(obj, program) === null)
      throw loadError(libbpf, `the object has no program ${program}`);
  });
}

/** Every map of both families as large as its pin (libbpf reuses a pin only when it matches), else as given. */
function sizeMaps(
  libbpf: Libbpf,
  obj: Handle,
  pinRoot: string,
  given: Partial<Record<MapName, number>>,
): void {
  for (const family of ["IPv4", "IPv6"] as const) {
    for (const [name, spec] of Object.entries(maps) as [MapName, MapSpec][]) {
      const kernelName = kernelMapName(spec, family);
      const map = libbpf.findMap(obj, kernelName);
      if (map === null) throw loadError(libbpf, `the object has no map ${kernelName}`);
      const size =
        pinnedMaxEntries(libbpf, join(pinRoot, kernelName)) ?? given[name] ?? spec.defaultMaxEntries;
      const rc = libbpf.setMaxEntries(map, size);
      if (rc < 0) throw loadError(libbpf, `sizing map ${kernelName}: ${errnoText(rc)}`);
    }
  }
}

/** Slot 0 of each family's masquerade map: the address given, or no entry (no masquerade). */
async function writeMasquerade(
  libbpf: Libbpf,
  pinRoot: string,
  addresses: Partial<Record<IPFamily, string>>,
): Promise<void> {
  const store = new KernelBPFMapStore(libbpf, pinRoot);
  try {
    for (const family of ["IPv4", "IPv6"] as const) {
      const key = encodeStruct(masqueradeKey, family, { slot: 0 });
      const address = addresses[family];
      await store.write(family, [
        address === undefined
          ? { map: "masquerade", op: "delete", keys: [key] }
          : {
              map: "masquerade",
              op: "update",
              entries: [[key, encodeStruct(masqueradeValue, family, { address })]],
            },
      ]);
    }
  } finally {
    store.close();
  }
}

// ---- links ----

/** The device and hook a pinned tcx link serves: struct bpf_link_info's tcx member. */
function linkTarget(libbpf: Libbpf, fd: number): { ifindex: number; attachType: number } | null {
  const info = Buffer.alloc(64);
  if (libbpf.objInfo(fd, info, Uint32Array.of(info.length)) !== 0) return null;
  if (info.readUInt32LE(0) !== BPF_LINK_TYPE_TCX) return null;
  return { ifindex: info.readUInt32LE(16), attachType: info.readUInt32LE(20) };
}

/**
 * Swaps the program inside the link pinned at `pin` when it still serves this device's ingress; otherwise
 * attaches anew first and only then drops the old link (for that moment both run: the second finds the first's
 * conntrack entry and passes).
 */
function attachDevice(libbpf: Libbpf, progFd: number, pin: string, ifindex: number): "attached" | "replaced" {
  const old = existsSync(pin) ? libbpf.objGet(pin) : -1;
  if (old >= 0) {
    try {
      const target = linkTarget(libbpf, old);
      const same = target?.ifindex === ifindex && target.attachType === BPF_TCX_INGRESS;
      if (same && libbpf.linkUpdate(old, progFd) === 0) return "replaced";
    } finally {
      libbpf.close(old);
    }
  }
  const link = libbpf.linkCreate(progFd, ifindex, BPF_TCX_INGRESS);
  if (link < 0) throw loadError(libbpf, `attaching ${TC_PROGRAM} to ifindex ${ifindex}: ${errnoText(link)}`);
  try {
    detachPinnedLink(libbpf, pin);
    const rc = libbpf.objPin(link, pin);
    if (rc < 0) throw loadError(libbpf, `pinning the tcx link at ${pin}: ${errnoText(rc)}`);
  } finally {
    // A pinned link stays attached; an unpinned one goes with its last descriptor.
    libbpf.close(link);
  }
  return "attached";
}

/** Detaches the links of devices not in `keep`; returns their device names. */
function detachOthers(libbpf: Libbpf | null, pinRoot: string, keep: ReadonlySet<string>): string[] {
  const dir = tcLinksDir(pinRoot);
  const detached: string[] = [];
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const device = name.replace(/-ingress$/, "");
    if (keep.has(device) && name.endsWith("-ingress")) continue;
    detachPinnedLink(libbpf, join(dir, name));
    detached.push(device);
  }
  return detached;
}

// ---- removal ----

export interface TcRemoval {
  /** Devices whose link was detached. */
  readonly devices: readonly string[];
  /** Devices whose XDP link was detached. */
  readonly xdp: readonly string[];
  /** Whether the NAT hooks' table was there and went. */
  readonly natHooks: boolean;
}

/**
 * Detaches every tc and XDP link pinned under `pinRoot` and deletes the NAT hooks' table (in the namespace `exec` runs
 * in); the maps stay for removeSockPrograms, which also detaches any tc link still pinned.
 */
export async function removeTcPrograms(
  pinRoot = DEFAULT_PIN_ROOT,
  exec: Exec = realExec,
): Promise<TcRemoval> {
  const linked = existsSync(tcLinksDir(pinRoot)) || existsSync(xdpLinksDir(pinRoot));
  const libbpf = linked ? await loadLibbpf().catch(() => null) : null;
  const xdp = detachXdpLinks(libbpf, pinRoot);
  const devices = detachOthers(libbpf, pinRoot, new Set());
  if (existsSync(tcLinksDir(pinRoot))) rmdirSync(tcLinksDir(pinRoot));
  return { devices, xdp, natHooks: await removeNatHooks(exec) };
}

// Attaches the XDP program (dist/ebpf/switchyard-xdp.bpf.o, bpf/xdp.c) ahead of the tc program on the external
// devices: --bpf-lb-acceleration, after Cilium's flag of that name. The program gives a new flow from outside its
// conntrack entry before the kernel builds a socket buffer; the tc program then finds the entry and passes.
//   disabled     no XDP program; any link a previous start pinned is detached
//   native       the driver's own XDP hook on every device; a device whose driver has none fails the start
//   best-effort  the driver's hook where it has one; elsewhere no XDP, and the tc program does the work
// Never the generic (skb) hook: it runs after the socket buffer is built, where tc already does the same job.
// Each device's bpf_link (BPF_LINK_CREATE with XDP_FLAGS_DRV_MODE: libbpf 1.1's bpf_program__attach_xdp takes no
// mode and falls back to the generic hook) is pinned at <root>/xdp/<device> and its program swapped in place on
// the next start, as the tc links are. bpf-tc.ts opens the object (it shares the tc object's maps) and calls here.

import { existsSync, mkdirSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { errnoText, type Libbpf } from "./bpf-libbpf.js";
import { detachPinnedLink, loadError, xdpLinksDir } from "./bpf-loader.js";

/** The build's object (bpf/build.mjs), found the same way from src/apply (tests) and dist/apply. */
export const XDP_OBJECT_PATH = fileURLToPath(
  new URL("../../dist/ebpf/switchyard-xdp.bpf.o", import.meta.url),
);

/** The C function's name, which libbpf and the kernel know the program by. */
export const XDP_PROGRAM = "xdp_ingress";

/** --bpf-lb-acceleration's values, Cilium's. */
export const XDP_ACCELERATIONS = ["disabled", "native", "best-effort"] as const;
export type XdpAcceleration = (typeof XDP_ACCELERATIONS)[number];

/** Per device: attached anew, swapped inside the pinned link, or (best-effort) left to tc: no native XDP. */
export type XdpAttachment = "attached" | "replaced" | "unsupported";

const BPF_XDP = 37;
const BPF_LINK_TYPE_XDP = 6;
const XDP_FLAGS_DRV_MODE = 1 << 2;

const pinOf = (pinRoot: string, device: string) => join(xdpLinksDir(pinRoot), device);

/**
 * Attaches `progFd` to each device (name → ifindex in this namespace) in native mode and detaches the links of
 * devices not among them. `native` throws on a device without native XDP, after detaching nothing.
 */
export function attachXdpPrograms(
  libbpf: Libbpf,
  progFd: number,
  pinRoot: string,
  targets: ReadonlyMap<string, number>,
  acceleration: Exclude<XdpAcceleration, "disabled">,
): { devices: Record<string, XdpAttachment>; detached: string[] } {
  mkdirSync(xdpLinksDir(pinRoot), { recursive: true });
  const devices: Record<string, XdpAttachment> = {};
  for (const [device, ifindex] of targets) {
    const attached = attachDevice(libbpf, progFd, pinOf(pinRoot, device), ifindex);
    if (typeof attached === "number") {
      if (acceleration === "native")
        throw loadError(libbpf, `attaching ${XDP_PROGRAM} natively to ${device}: ${errnoText(attached)}`);
      // best-effort: a link of an earlier start that did load stays only while this one does.
      detachPinnedLink(libbpf, pinOf(pinRoot, device));
      devices[device] = "unsupported";
    } else devices[device] = attached;
  }
  const kept = new Set(Object.keys(devices).filter((d) => devices[d] !== "unsupported"));
  return { devices, detached: detachXdpLinks(libbpf, pinRoot, kept) };
}

/** The device a pinned XDP link serves (struct bpf_link_info's xdp member), or null when it is no XDP link. */
function linkIfindex(libbpf: Libbpf, fd: number): number | null {
  const info = Buffer.alloc(64);
  if (libbpf.objInfo(fd, info, Uint32Array.of(info.length)) !== 0) return null;
  return info.readUInt32LE(0) === BPF_LINK_TYPE_XDP ? info.readUInt32LE(16) : null;
}

/**
 * Swaps the program inside the link pinned at `pin` when it still serves this device; otherwise detaches it and
 * attaches anew (a device takes one XDP program per mode, so the old link must go first). -errno when the
 * driver refuses native mode.
 */
function attachDevice(libbpf: Libbpf, progFd: number, pin: string, ifindex: number): XdpAttachment | number {
  const old = existsSync(pin) ? libbpf.objGet(pin) : -1;
  if (old >= 0) {
    try {
      if (linkIfindex(libbpf, old) === ifindex && libbpf.linkUpdate(old, progFd) === 0) return "replaced";
    } finally {
      libbpf.close(old);
    }
  }
  detachPinnedLink(libbpf, pin);
  const link = libbpf.linkCreate(progFd, ifindex, BPF_XDP, XDP_FLAGS_DRV_MODE);
  if (link < 0) return link;
  try {
    const rc = libbpf.objPin(link, pin);
    if (rc < 0) throw loadError(libbpf, `pinning the XDP link at ${pin}: ${errnoText(rc)}`);
  } finally {
    // A pinned link stays attached; an unpinned one goes with its last descriptor.
    libbpf.close(link);
  }
  return "attached";
}

/** Detaches the XDP links of devices not in `keep` (all of them by default); returns their device names. */
export function detachXdpLinks(
  libbpf: Libbpf | null,
  pinRoot: string,
  keep: ReadonlySet<string> = new Set(),
): string[] {
  const dir = xdpLinksDir(pinRoot);
  const detached: string[] = [];
  for (const device of existsSync(dir) ? readdirSync(dir) : []) {
    if (keep.has(device)) continue;
    detachPinnedLink(libbpf, join(dir, device));
    detached.push(device);
  }
  if (keep.size === 0 && existsSync(dir)) rmdirSync(dir);
  return detached;
}

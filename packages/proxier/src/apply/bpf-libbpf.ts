// libbpf (libbpf.so.1) and the two libc calls the eBPF mode needs, bound through koffi on first use, as
// netlink-libc.ts binds libc: a host without libbpf loses the eBPF mode (one clear line), not the proxier.
// Object handles are opaque pointers (koffi gives them as bigints, 0n or null for NULL). libbpf 1.x returns
// -errno from calls that return an int and sets errno when one returning a pointer gives NULL.

import { constants } from "node:os";

export const LIBBPF_MISSING = "eBPF mode needs libbpf.so.1 (Debian/Ubuntu: apt install libbpf1)";

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** "ENOENT (2)"; the kernel's own ENOTSUPP (524), which user space has no name for, too. */
export function errnoText(errno: number): string {
  const n = Math.abs(errno);
  const name = ERRNO_NAMES.get(n) ?? (n === 524 ? "ENOTSUPP" : "errno");
  return `${name} (${n})`;
}

/** An opaque libbpf object (struct bpf_object, bpf_map, bpf_program or bpf_link). */
export type Handle = bigint;

/** What bpf_object__open_file needs besides the path. */
export interface OpenOptions {
  /** Maps defined with LIBBPF_PIN_BY_NAME are pinned (and found again) under this directory. */
  readonly pinRoot: string;
  /** Where the verifier writes its log when a program fails to load (from `allocLog`). */
  readonly log: Handle;
  readonly logSize: number;
}

export interface Libbpf {
  openObject(path: string, options: OpenOptions): Handle | null;
  closeObject(obj: Handle): void;
  loadObject(obj: Handle): number;
  findMap(obj: Handle, name: string): Handle | null;
  setMaxEntries(map: Handle, entries: number): number;
  setAutocreate(map: Handle, create: boolean): number;
  findProgram(obj: Handle, name: string): Handle | null;
  setAutoload(prog: Handle, load: boolean): number;
  attachCgroup(prog: Handle, cgroupFd: number): Handle | null;
  /** An iterator program's link (not pinned: it goes with the handle); iterCreate starts one run of it. */
  attachIter(prog: Handle): Handle | null;
  /** A new iterator over the link's objects, in the calling thread's network namespace; read it to run it. */
  iterCreate(linkFd: number): number;
  /** The fd of a loaded object's map, owned by the object. */
  mapFd(map: Handle): number;
  openLink(path: string): Handle | null;
  updateLinkProgram(link: Handle, prog: Handle): number;
  pinLink(link: Handle, path: string): number;
  linkFd(link: Handle): number;
  /** Closes libbpf's handle; a pinned link stays attached. */
  destroyLink(link: Handle): number;
  /** BPF_LINK_DETACH: the link's program leaves its cgroup now, whoever else holds the link. */
  detachLink(fd: number): number;
  objGet(path: string): number;
  /** The program's descriptor once loaded (bpf_program__fd). */
  programFd(prog: Handle): number;
  /**
   * BPF_LINK_CREATE for attach types libbpf 1.1 has no helper for (tcx) or no flags for (XDP's mode): the link's
   * descriptor, or -errno.
   */
  linkCreate(progFd: number, targetFd: number, attachType: number, flags?: number): number;
  /** BPF_LINK_UPDATE on a descriptor: the link runs `progFd` from now on. */
  linkUpdate(linkFd: number, progFd: number): number;
  objPin(fd: number, path: string): number;
  /** libc's if_nametoindex in this thread's network namespace; 0 when there is no such device. */
  ifNameToIndex(name: string): number;
  /** bpf_obj_get_info_by_fd into `info`; `length` holds the buffer's size in, the kernel's size out. */
  objInfo(fd: number, info: Buffer, length: Uint32Array): number;
  updateBatch(fd: number, keys: Buffer, values: Buffer, count: Uint32Array, opts: Buffer): number;
  deleteBatch(fd: number, keys: Buffer, count: Uint32Array, opts: Buffer): number;
  lookupBatch(
    fd: number,
    inBatch: Buffer | null,
    outBatch: Buffer,
    keys: Buffer,
    values: Buffer,
    count: Uint32Array,
    opts: Buffer,
  ): number;
  updateElem(fd: number, key: Buffer, value: Buffer, flags: number): number;
  deleteElem(fd: number, key: Buffer): number;
  lookupElem(fd: number, key: Buffer, value: Buffer): number;
  nextKey(fd: number, key: Buffer | null, next: Buffer): number;
  /** A native buffer for the verifier's log, which libbpf writes after openObject returns. */
  allocLog(size: number): Handle;
  readLog(log: Handle): string;
  freeLog(log: Handle): void;
  close(fd: number): number;
  mount(source: string, target: string, fstype: string): number;
  /** setns(2): moves the calling thread (only it) into the namespace `fd` refers to. */
  setns(fd: number, nstype: number): number;
  errno(): number;
  /** libbpf's warnings since the last call (its print callback), for error messages. */
  takeMessages(): string[];
}

/** Thrown when koffi or libbpf.so.1 cannot be loaded here. */
export class LibbpfUnavailableError extends Error {
  constructor(cause: unknown) {
    super(LIBBPF_MISSING, { cause });
    this.name = "LibbpfUnavailableError";
  }
}

let loaded: Promise<Libbpf> | undefined;

/** Binds the calls once per process; rejects with LibbpfUnavailableError when libbpf cannot be loaded. */
export function loadLibbpf(): Promise<Libbpf> {
  loaded ??= bind();
  return loaded;
}

type Fn = (...args: unknown[]) => unknown;

/** How many of libbpf's messages are kept for the next error (the last ones matter). */
const KEPT_MESSAGES = 20;

async function bind(): Promise<Libbpf> {
  if (process.platform !== "linux") throw new Error(`eBPF mode needs Linux (this is ${process.platform})`);
  let koffi: typeof import("koffi").default;
  let lib: ReturnType<typeof koffi.load>;
  try {
    koffi = (await import("koffi")).default;
    lib = koffi.load("libbpf.so.1");
  } catch (e) {
    throw new LibbpfUnavailableError(e);
  }
  const libc = koffi.load("libc.so.6");
  for (const t of ["bpf_object", "bpf_map", "bpf_program", "bpf_link"]) koffi.opaque(t);
  const OpenOpts = koffi.struct("bpf_object_open_opts", {
    sz: "size_t",
    object_name: "const char *",
    relaxed_maps: "bool",
    pin_root_path: "const char *",
    removed_attach_prog_fd: "uint32_t",
    kconfig: "const char *",
    btf_custom_path: "const char *",
    kernel_log_buf: "void *",
    kernel_log_size: "size_t",
    kernel_log_level: "uint32_t",
  });
  const c = (decl: string) => libc.func(decl) as unknown as Fn;
  const messages = captureMessages(koffi, lib, c);
  const fns = declare((decl) => lib.func(decl) as unknown as Fn, c);
  const handle = (v: unknown): Handle | null => (v === null || v === 0n ? null : (v as Handle));
  const int = (v: unknown) => v as number;
  return {
    openObject: (path, o) =>
      handle(
        fns.open(path, {
          sz: koffi.sizeof(OpenOpts),
          pin_root_path: o.pinRoot,
          kernel_log_buf: o.log,
          kernel_log_size: o.logSize,
          kernel_log_level: 0,
        }),
      ),
    closeObject: (obj) => void fns.closeObject(obj),
    loadObject: (obj) => int(fns.load(obj)),
    findMap: (obj, name) => handle(fns.findMap(obj, name)),
    setMaxEntries: (map, n) => int(fns.setMax(map, n)),
    setAutocreate: (map, on) => int(fns.autocreate(map, on)),
    findProgram: (obj, name) => handle(fns.findProg(obj, name)),
    setAutoload: (prog, on) => int(fns.autoload(prog, on)),
    attachCgroup: (prog, fd) => handle(fns.attachCgroup(prog, fd)),
    attachIter: (prog) => handle(fns.attachIter(prog, null)),
    iterCreate: (linkFd) => int(fns.iterCreate(linkFd)),
    mapFd: (map) => int(fns.mapFd(map)),
    openLink: (path) => handle(fns.openLink(path)),
    updateLinkProgram: (link, prog) => int(fns.updateLink(link, prog)),
    pinLink: (link, path) => int(fns.pinLink(link, path)),
    linkFd: (link) => int(fns.linkFd(link)),
    destroyLink: (link) => int(fns.destroyLink(link)),
    detachLink: (fd) => int(fns.detachLink(fd)),
    objGet: (path) => int(fns.objGet(path)),
    programFd: (prog) => int(fns.programFd(prog)),
    linkCreate: (progFd, targetFd, attachType, flags = 0) =>
      int(fns.linkCreate(progFd, targetFd, attachType, flags === 0 ? null : linkCreateOpts(flags))),
    linkUpdate: (linkFd, progFd) => int(fns.linkUpdate(linkFd, progFd, null)),
    objPin: (fd, path) => int(fns.objPin(fd, path)),
    ifNameToIndex: (name) => int(fns.ifNameToIndex(name)),
    objInfo: (fd, info, length) => int(fns.objInfo(fd, info, length)),
    updateBatch: (fd, keys, values, count, opts) => int(fns.updateBatch(fd, keys, values, count, opts)),
    deleteBatch: (fd, keys, count, opts) => int(fns.deleteBatch(fd, keys, count, opts)),
    lookupBatch: (fd, inBatch, outBatch, keys, values, count, opts) =>
      int(fns.lookupBatch(fd, inBatch, outBatch, keys, values, count, opts)),
    updateElem: (fd, key, value, flags) => int(fns.updateElem(fd, key, value, flags)),
    deleteElem: (fd, key) => int(fns.deleteElem(fd, key)),
    lookupElem: (fd, key, value) => int(fns.lookupElem(fd, key, value)),
    nextKey: (fd, key, next) => int(fns.nextKey(fd, key, next)),
    allocLog: (size) => koffi.alloc("char", size) as Handle,
    readLog: (log) => String(koffi.decode(log, "char", -1)),
    freeLog: (log) => koffi.free(log),
    close: (fd) => int(fns.close(fd)),
    mount: (source, target, fstype) => int(fns.mount(source, target, fstype, 0, null)),
    setns: (fd, nstype) => int(fns.setns(fd, nstype)),
    errno: () => koffi.errno(),
    takeMessages: () => messages.splice(0),
  };
}

/** struct bpf_link_create_opts up to its flags: sz, then flags (libbpf takes a shorter struct than its own). */
function linkCreateOpts(flags: number): Buffer {
  const opts = Buffer.alloc(16);
  opts.writeBigUInt64LE(16n, 0);
  opts.writeUInt32LE(flags, 8);
  return opts;
}

/** The C declarations, in libbpf's own words (opaque handles as pointers to the types bind() declares). */
function declare(f: (decl: string) => Fn, c: (decl: string) => Fn) {
  return {
    open: f("bpf_object *bpf_object__open_file(const char *path, const bpf_object_open_opts *opts)"),
    closeObject: f("void bpf_object__close(bpf_object *obj)"),
    load: f("int bpf_object__load(bpf_object *obj)"),
    findMap: f("bpf_map *bpf_object__find_map_by_name(bpf_object *obj, const char *name)"),
    setMax: f("int bpf_map__set_max_entries(bpf_map *map, uint32_t max_entries)"),
    autocreate: f("int bpf_map__set_autocreate(bpf_map *map, bool autocreate)"),
    findProg: f("bpf_program *bpf_object__find_program_by_name(bpf_object *obj, const char *name)"),
    autoload: f("int bpf_program__set_autoload(bpf_program *prog, bool autoload)"),
    attachCgroup: f("bpf_link *bpf_program__attach_cgroup(bpf_program *prog, int cgroup_fd)"),
    attachIter: f("bpf_link *bpf_program__attach_iter(bpf_program *prog, void *opts)"),
    iterCreate: f("int bpf_iter_create(int link_fd)"),
    mapFd: f("int bpf_map__fd(bpf_map *map)"),
    openLink: f("bpf_link *bpf_link__open(const char *path)"),
    updateLink: f("int bpf_link__update_program(bpf_link *link, bpf_program *prog)"),
    pinLink: f("int bpf_link__pin(bpf_link *link, const char *path)"),
    linkFd: f("int bpf_link__fd(bpf_link *link)"),
    destroyLink: f("int bpf_link__destroy(bpf_link *link)"),
    detachLink: f("int bpf_link_detach(int link_fd)"),
    objGet: f("int bpf_obj_get(const char *pathname)"),
    programFd: f("int bpf_program__fd(bpf_program *prog)"),
    linkCreate: f("int bpf_link_create(int prog_fd, int target_fd, int attach_type, void *opts)"),
    linkUpdate: f("int bpf_link_update(int link_fd, int new_prog_fd, void *opts)"),
    objPin: f("int bpf_obj_pin(int fd, const char *pathname)"),
    ifNameToIndex: c("unsigned int if_nametoindex(const char *ifname)"),
    objInfo: f("int bpf_obj_get_info_by_fd(int fd, void *info, void *info_len)"),
    updateBatch: f("int bpf_map_update_batch(int fd, void *keys, void *values, void *count, void *opts)"),
    deleteBatch: f("int bpf_map_delete_batch(int fd, void *keys, void *count, void *opts)"),
    lookupBatch: f(
      "int bpf_map_lookup_batch(int fd, void *in_batch, void *out_batch, void *keys, void *values, void *count, void *opts)",
    ),
    updateElem: f("int bpf_map_update_elem(int fd, void *key, void *value, uint64_t flags)"),
    deleteElem: f("int bpf_map_delete_elem(int fd, void *key)"),
    lookupElem: f("int bpf_map_lookup_elem(int fd, void *key, void *value)"),
    nextKey: f("int bpf_map_get_next_key(int fd, void *key, void *next_key)"),
    close: c("int close(int fd)"),
    setns: c("int setns(int fd, int nstype)"),
    mount: c(
      "int mount(const char *source, const char *target, const char *fstype, unsigned long flags, void *data)",
    ),
  };
}

/**
 * Routes libbpf's printed messages (warnings and information; not its debug output) into a short list instead of
 * stderr: the loader puts the last ones into its errors. The format's arguments arrive as a va_list, which
 * vsnprintf formats; on x86-64 and arm64 alike a va_list argument is passed as a pointer.
 */
function captureMessages(
  koffi: typeof import("koffi").default,
  lib: ReturnType<typeof koffi.load>,
  c: (d: string) => Fn,
) {
  const kept: string[] = [];
  const vsnprintf = c("int vsnprintf(void *buf, size_t size, const char *fmt, void *args)");
  const Print = koffi.proto("int libbpf_print_fn(int level, const char *fmt, void *args)");
  const setPrint = lib.func("void *libbpf_set_print(libbpf_print_fn *fn)") as unknown as Fn;
  const LIBBPF_DEBUG = 2;
  const print = (level: number, fmt: string, args: unknown) => {
    if (level >= LIBBPF_DEBUG) return 0;
    const buf = Buffer.alloc(1024);
    const n = vsnprintf(buf, buf.length, fmt, args) as number;
    kept.push(
      buf
        .subarray(0, Math.max(0, Math.min(n, buf.length - 1)))
        .toString()
        .trimEnd(),
    );
    if (kept.length > KEPT_MESSAGES) kept.shift();
    return 0;
  };
  setPrint(koffi.register(print, koffi.pointer(Print)));
  return kept;
}

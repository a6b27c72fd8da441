// The libc calls a netlink socket needs, bound through koffi on first use. koffi is loaded
// lazily so that a platform without its prebuilt binary only loses the netlink writer (the
// applier falls back to `nft`), not the proxier.

export const MSG_DONTWAIT_FLAG = 0x40;

export interface NetlinkLibc {
  socket(domain: number, type: number, protocol: number): number;
  setsockopt(fd: number, level: number, option: number, value: Buffer, length: number): number;
  send(fd: number, data: Buffer, length: number, flags: number): number;
  /** send() on a worker thread; the buffer must stay untouched until it settles. */
  sendAsync(fd: number, data: Buffer): Promise<number>;
  recv(fd: number, into: Buffer, length: number, flags: number): number;
  open(path: string, flags: number): number;
  setns(fd: number, nstype: number): number;
  close(fd: number): number;
  /** errno of the last call made on this thread (koffi keeps it for asynchronous calls too). */
  errno(): number;
}

let loaded: Promise<NetlinkLibc> | undefined;

/** Binds the calls once per process; rejects when koffi or libc cannot be loaded here. */
export function loadNetlinkLibc(): Promise<NetlinkLibc> {
  loaded ??= bind();
  return loaded;
}

interface KoffiFunction {
  (...args: unknown[]): number;
  async(...args: unknown[]): void;
}

async function bind(): Promise<NetlinkLibc> {
  if (process.platform !== "linux") throw new Error(`netlink needs Linux (this is ${process.platform})`);
  const koffi = (await import("koffi")).default;
  const libc = koffi.load("libc.so.6");
  const fn = (decl: string) => libc.func(decl) as unknown as KoffiFunction;
  const socket = fn("int socket(int domain, int type, int protocol)");
  const setsockopt = fn("int setsockopt(int fd, int level, int option, const void *value, uint32_t length)");
  const send = fn("long send(int fd, const void *data, size_t length, int flags)");
  const recv = fn("long recv(int fd, void *into, size_t length, int flags)");
  const open = fn("int open(const char *path, int flags)");
  const setns = fn("int setns(int fd, int nstype)");
  const close = fn("int close(int fd)");
  return {
    socket: (d, t, p) => socket(d, t, p),
    setsockopt: (fd, level, option, value, length) => setsockopt(fd, level, option, value, length),
    send: (fd, data, length, flags) => send(fd, data, length, flags),
    sendAsync: (fd, data) =>
      new Promise((resolve, reject) => {
        send.async(fd, data, data.length, 0, (err: unknown, n: number) => (err ? reject(err) : resolve(n)));
      }),
    recv: (fd, into, length, flags) => recv(fd, into, length, flags),
    open: (path, flags) => open(path, flags),
    setns: (fd, nstype) => setns(fd, nstype),
    close: (fd) => close(fd),
    errno: () => koffi.errno(),
  };
}

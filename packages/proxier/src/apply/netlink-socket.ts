// A NETLINK_NETFILTER socket. Node has no AF_NETLINK sockets, so libc's socket, send and recv are
// called through koffi (an FFI whose prebuilt binary comes in its npm package). A socket opened for a
// named network namespace is created inside it and keeps talking to it, the calling thread returning
// to its own namespace at once.
import { loadNetlinkLibc, MSG_DONTWAIT_FLAG, type NetlinkLibc } from "./netlink-libc.js";

const AF_NETLINK = 16;
const SOCK_RAW = 3;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_NETFILTER = 12;
const SOL_SOCKET = 1;
const SO_SNDBUFFORCE = 32;
const SO_RCVBUFFORCE = 33;
const SOL_NETLINK = 270;
const NETLINK_CAP_ACK = 10;
const EAGAIN = 11;
const EINTR = 4;
const ENOBUFS = 105;
const CLONE_NEWNET = 0x40000000;

/**
 * Batches above this many bytes (several thousand Services) are sent from a worker thread, so the
 * event loop keeps running through seconds of kernel work; smaller ones are sent from this thread,
 * since an await would add the event loop's queue to the sync's time.
 */
const ASYNC_SEND_BYTES = 4 * 1024 * 1024;
const RECV_BYTES = 1 << 20;

/** A system call failed; `errno` is the kernel's error number. */
export class NetlinkSocketError extends Error {
  readonly errno: number;
  constructor(call: string, errno: number) {
    super(`netlink ${call}: errno ${errno}`);
    this.errno = errno;
  }
}

export class NetfilterSocket {
  readonly #libc: NetlinkLibc;
  readonly #fd: number;
  readonly #recvBuf = Buffer.alloc(RECV_BYTES);
  #sndbuf = 0;
  #closed = false;

  private constructor(libc: NetlinkLibc, fd: number) {
    this.#libc = libc;
    this.#fd = fd;
  }

  /** Opens a socket in this process's network namespace, or in `/run/netns/<netns>`. */
  static async open(options: { netns?: string } = {}): Promise<NetfilterSocket> {
    const libc = await loadNetlinkLibc();
    const fd =
      options.netns === undefined
        ? libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER)
        : socketInNetns(libc, options.netns);
    if (fd < 0) throw new NetlinkSocketError("socket", libc.errno());
    const s = new NetfilterSocket(libc, fd);
    // Error answers carry only the failed message's header, not the whole message.
    s.#setInt(SOL_NETLINK, NETLINK_CAP_ACK, 1);
    s.#setInt(SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20);
    return s;
  }

  #setInt(level: number, option: number, value: number): void {
    const v = Buffer.alloc(4);
    v.writeInt32LE(value, 0);
    if (this.#libc.setsockopt(this.#fd, level, option, v, 4) < 0) {
      throw new NetlinkSocketError(`setsockopt ${option}`, this.#libc.errno());
    }
  }

  /**
   * Sends one buffer of messages. The kernel handles an nf_tables batch inside the send call, so
   * by the time it returns every error answer is queued: the caller drains them with `drain()`.
   */
  async send(messages: Buffer): Promise<void> {
    if (this.#closed) throw new Error("netlink socket is closed");
    // The whole batch goes as one datagram, which the send buffer must hold.
    if (messages.length + 4096 > this.#sndbuf) {
      this.#sndbuf = Math.max(messages.length * 2, 1 << 20);
      this.#setInt(SOL_SOCKET, SO_SNDBUFFORCE, this.#sndbuf);
    }
    for (;;) {
      const n =
        messages.length > ASYNC_SEND_BYTES
          ? await this.#libc.sendAsync(this.#fd, messages)
          : this.#libc.send(this.#fd, messages, messages.length, 0);
      if (n >= 0) return;
      const errno = this.#libc.errno();
      if (errno !== EINTR) throw new NetlinkSocketError("send", errno);
    }
  }

  /** Every answer already queued, without waiting. */
  drain(): Buffer[] {
    const out: Buffer[] = [];
    for (;;) {
      const n = this.#recv(MSG_DONTWAIT_FLAG);
      if (n === null) return out;
      out.push(Buffer.from(this.#recvBuf.subarray(0, n)));
    }
  }

  /** The next datagram, waiting for it. */
  receive(): Buffer {
    const n = this.#recv(0);
    if (n === null) throw new NetlinkSocketError("recv", EAGAIN);
    return Buffer.from(this.#recvBuf.subarray(0, n));
  }

  #recv(flags: number): number | null {
    for (;;) {
      const n = this.#libc.recv(this.#fd, this.#recvBuf, this.#recvBuf.length, flags);
      if (n >= 0) return n;
      const errno = this.#libc.errno();
      if (errno === EINTR) continue;
      if (errno === EAGAIN) return null;
      // Answers were lost: the caller cannot know the outcome and must treat it as a failure.
      if (errno === ENOBUFS) throw new NetlinkSocketError("recv (answers lost)", errno);
      throw new NetlinkSocketError("recv", errno);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#libc.close(this.#fd);
  }
}

/** Creates the socket inside a named namespace; the thread is back in its own namespace after. */
function socketInNetns(libc: NetlinkLibc, netns: string): number {
  const O_RDONLY_CLOEXEC = 0o2000000;
  const own = libc.open("/proc/thread-self/ns/net", O_RDONLY_CLOEXEC);
  if (own < 0) throw new NetlinkSocketError("open own namespace", libc.errno());
  const target = libc.open(`/run/netns/${netns}`, O_RDONLY_CLOEXEC);
  if (target < 0) {
    const errno = libc.errno();
    libc.close(own);
    throw new Error(`network namespace ${netns}: cannot open /run/netns/${netns} (errno ${errno})`);
  }
  try {
    if (libc.setns(target, CLONE_NEWNET) < 0) throw new NetlinkSocketError("setns", libc.errno());
    const fd = libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    const errno = libc.errno();
    if (libc.setns(own, CLONE_NEWNET) < 0) {
      // The JavaScript thread would now live in the wrong namespace: nothing after this is safe.
      throw new Error(`setns back to the process's own network namespace failed (errno ${libc.errno()})`);
    }
    if (fd < 0) throw new NetlinkSocketError("socket", errno);
    return fd;
  } finally {
    libc.close(target);
    libc.close(own);
  }
}

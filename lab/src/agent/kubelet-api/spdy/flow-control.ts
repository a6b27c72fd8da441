/**
 * SPDY/3.1 send windows, per stream and for the whole connection (stream 0): DATA may only go while both have room,
 * and the peer reopens them with WINDOW_UPDATE.
 *
 * moby/spdystream, the SPDY library under client-go and so under every kubectl, never sends WINDOW_UPDATE: it
 * leaves back-pressure to TCP. Enforcing windows against it would stall every output after 64 KiB. So a sender
 * that finds a window empty waits at most `graceMs` for the peer's first WINDOW_UPDATE; if none ever came on this
 * connection, the peer is taken not to do flow control and windows stop being enforced. A peer that does send
 * WINDOW_UPDATE keeps its windows honoured for the life of the connection.
 */

export const initialWindowSize = 64 * 1024;

export class SendWindows {
  private connectionWindow = initialWindowSize;
  private initialStreamWindow = initialWindowSize;
  private readonly streamWindows = new Map<number, number>();
  private readonly wakers = new Set<() => void>();
  private peerGrantsWindows = false;
  private enforced = true;

  constructor(private readonly graceMs: number) {}

  open(streamId: number): void {
    this.streamWindows.set(streamId, this.initialStreamWindow);
  }

  forget(streamId: number): void {
    this.streamWindows.delete(streamId);
  }

  /** How many of `wanted` bytes may be sent on the stream right now (0: wait for a window). */
  allowance(streamId: number, wanted: number): number {
    if (!this.enforced) return wanted;
    const streamWindow = this.streamWindows.get(streamId) ?? 0;
    return Math.max(0, Math.min(wanted, streamWindow, this.connectionWindow));
  }

  spend(streamId: number, bytes: number): void {
    this.connectionWindow -= bytes;
    this.streamWindows.set(streamId, (this.streamWindows.get(streamId) ?? 0) - bytes);
  }

  /** A WINDOW_UPDATE: stream 0 is the connection's window. */
  grant(streamId: number, delta: number): void {
    this.peerGrantsWindows = true;
    if (streamId === 0) this.connectionWindow += delta;
    else if (this.streamWindows.has(streamId))
      this.streamWindows.set(streamId, (this.streamWindows.get(streamId) ?? 0) + delta);
    this.wakeAll();
  }

  /** SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's window by the change, as the spec says. */
  setInitialStreamWindow(size: number): void {
    const change = size - this.initialStreamWindow;
    this.initialStreamWindow = size;
    for (const [id, window] of this.streamWindows) this.streamWindows.set(id, window + change);
    this.peerGrantsWindows = true;
    this.wakeAll();
  }

  /** Resolves when a window may have opened: a grant, the grace running out without any, or close(). */
  waitForWindow(): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.peerGrantsWindows
        ? undefined
        : setTimeout(() => {
            if (!this.peerGrantsWindows) this.enforced = false;
            this.wakeAll();
          }, this.graceMs);
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      this.wakers.add(wake);
    });
  }

  /** Wakes every waiting sender for good: the connection is gone, so nothing will be granted. */
  close(): void {
    this.enforced = false;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}

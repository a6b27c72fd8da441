import {
  appendFileSync,
  closeSync,
  existsSync,
  type FSWatcher,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { formatCriLine, type LogLine, parseCriLog } from "./cri-log.js";

type Listener = (lines: LogLine[]) => void;
interface Follower {
  onLines?: Listener;
  /** The output as read, unterminated lines included (a shell's prompt), for attach. */
  onText?: (text: string) => void;
  onEnd: () => void;
}

/**
 * A container's log as the kubelet keeps it: one CRI-format file per instance (`<dir>/<restartCount>.log`, the
 * layout of /var/log/pods), the current one and the previous one. The process writes its raw output to
 * `rawFile` itself (so it outlives this agent, and `switchyard-lab logs` reads it); this recorder follows that
 * file and copies each new line, stamped with the time it was read, into the instance's file.
 */
export class ContainerLog {
  private instance: number | undefined;
  private ended = true;
  private offset = 0;
  private partial = "";
  private decoder = new StringDecoder("utf8");
  private watcher: FSWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<Follower>();

  constructor(
    private readonly rawFile: string,
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called once the raw file is open for a new process: its output starts at the file's current end. */
  begin(restartCount: number): void {
    this.end();
    mkdirSync(this.dir, { recursive: true });
    // Only the previous instance's log is kept, as the kubelet keeps one dead container per container.
    for (const f of readdirSync(this.dir))
      if (f !== `${restartCount - 1}.log`) rmSync(join(this.dir, f), { force: true });
    writeFileSync(this.file(restartCount), "");
    this.instance = restartCount;
    this.ended = false;
    this.offset = existsSync(this.rawFile) ? statSync(this.rawFile).size : 0;
    this.partial = "";
    this.decoder = new StringDecoder("utf8");
    try {
      this.watcher = watch(this.rawFile, () => this.poll());
    } catch {}
    // inotify is the fast path; the poll catches whatever a watch misses (or a filesystem without one).
    this.poller = setInterval(() => this.poll(), 1000);
  }

  /** The process exited: what it wrote last is read, an unterminated last line kept as a part, followers end. */
  end(): void {
    if (this.ended) return;
    this.poll();
    if (this.partial) this.record([{ time: this.now(), text: this.partial }]);
    this.partial = "";
    this.ended = true;
    this.watcher?.close();
    clearInterval(this.poller);
    for (const l of this.listeners) l.onEnd();
    this.listeners.clear();
  }

  /** The restart count of the newest instance, and whether it is still writing. */
  get current(): { instance: number; running: boolean } | undefined {
    return this.instance === undefined ? undefined : { instance: this.instance, running: !this.ended };
  }

  /** The lines of one instance, as far as they are read (an instance no longer kept has none). */
  lines(instance: number): LogLine[] {
    if (this.instance === undefined || instance < 0) return [];
    const file = this.file(instance);
    return existsSync(file) ? parseCriLog(readFileSync(file, "utf8")) : [];
  }

  /**
   * Calls `onLines` with the lines the current instance writes from now on, `onEnd` when it ends. Reading
   * `lines()` and subscribing in one turn of the event loop misses nothing: lines are recorded synchronously.
   */
  follow(onLines: Listener, onEnd: () => void): () => void {
    return this.subscribe({ onLines, onEnd });
  }

  /**
   * Calls `onText` with the current instance's output as it is read, partial lines too, `onEnd` when it ends;
   * `fromStart` first gives what the instance wrote so far.
   */
  followText(onText: (text: string) => void, onEnd: () => void, fromStart = false): () => void {
    if (fromStart && this.instance !== undefined) {
      const sofar =
        this.lines(this.instance)
          .map((l) => l.text)
          .join("") + (this.ended ? "" : this.partial);
      if (sofar) onText(sofar);
    }
    return this.subscribe({ onText, onEnd });
  }

  private subscribe(entry: Follower): () => void {
    if (this.ended) {
      entry.onEnd();
      return () => {};
    }
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  private file(instance: number): string {
    return join(this.dir, `${instance}.log`);
  }

  private poll(): void {
    if (this.ended || !existsSync(this.rawFile)) return;
    const fd = openSync(this.rawFile, "r");
    let text = "";
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        // The decoder keeps a character split between two reads for the next one.
        text += this.decoder.write(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    if (!text) return;
    for (const l of this.listeners) l.onText?.(text);
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop() ?? "";
    const time = this.now();
    this.record(parts.map((p) => ({ time, text: `${p}\n` })));
  }

  private record(lines: LogLine[]): void {
    if (lines.length === 0 || this.instance === undefined) return;
    appendFileSync(this.file(this.instance), lines.map(formatCriLine).join(""));
    for (const l of this.listeners) l.onLines?.(lines);
  }
}

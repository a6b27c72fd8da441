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
  renameSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { formatCriLine, type LogLine, type LogStream, parseCriLog } from "./cri-log.js";

type Listener = (lines: LogLine[]) => void;
/** Output as read, unterminated lines included (a shell's prompt), with the stream it came on. */
type TextListener = (text: string, stream: LogStream) => void;
interface Follower {
  onLines?: Listener;
  onText?: TextListener;
  onEnd: () => void;
}

/** Where the process writes each of its outputs itself (container.ts opens them for it). */
export type OutputFiles = Record<LogStream, string>;

/** How far one output file is read, and the start of a line not finished yet. */
interface Reader {
  offset: number;
  /** The end of the last whole line recorded: where a restarted agent's reader goes on (resume). */
  committed: number;
  partial: string;
  decoder: StringDecoder;
}

const streams: readonly LogStream[] = ["stdout", "stderr"];
const fresh = (offset = 0): Reader => ({
  offset,
  committed: offset,
  partial: "",
  decoder: new StringDecoder("utf8"),
});

/**
 * A container's log as the kubelet keeps it: one CRI-format file per instance (`<dir>/<restartCount>.log`, the
 * layout of /var/log/pods), the current one and the previous one, each line tagged with its stream. The process
 * writes its stdout and stderr to two files itself (so it never blocks on this agent); this recorder follows
 * both and copies each new line, stamped with the time it was read, into the instance's file, and the output as
 * it comes into `mergedFile` (the container's plain log, which `switchyard-lab logs` reads).
 */
export class ContainerLog {
  private instance: number | undefined;
  private ended = true;
  private readers: Record<LogStream, Reader> = { stdout: fresh(), stderr: fresh() };
  private watchers: FSWatcher[] = [];
  private poller: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<Follower>();

  constructor(
    private readonly files: OutputFiles,
    private readonly mergedFile: string,
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called once the output files are open for a new process: its output starts at their current ends. */
  begin(restartCount: number): void {
    this.end();
    mkdirSync(this.dir, { recursive: true });
    // Only the previous instance's log is kept, as the kubelet keeps one dead container per container.
    for (const f of readdirSync(this.dir))
      if (f !== `${restartCount - 1}.log`) rmSync(join(this.dir, f), { force: true });
    writeFileSync(this.file(restartCount), "");
    const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
    this.followFiles(restartCount, { stdout: size(this.files.stdout), stderr: size(this.files.stderr) });
  }

  /**
   * Goes on with an instance a previous agent recorded (an adopted container): from the last whole line it
   * recorded, so what the process wrote while no agent ran is recorded now, once.
   */
  resume(instance: number): void {
    this.end();
    mkdirSync(this.dir, { recursive: true });
    let offsets: Record<LogStream, number> | undefined;
    try {
      offsets = JSON.parse(readFileSync(this.offsetsFile(instance), "utf8")) as Record<LogStream, number>;
    } catch {}
    const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
    this.followFiles(
      instance,
      offsets ?? { stdout: size(this.files.stdout), stderr: size(this.files.stderr) },
    );
  }

  private followFiles(instance: number, offsets: Record<LogStream, number>): void {
    this.instance = instance;
    this.ended = false;
    for (const stream of streams) {
      this.readers[stream] = fresh(offsets[stream]);
      try {
        this.watchers.push(watch(this.files[stream], () => this.poll()));
      } catch {}
    }
    this.saveOffsets();
    // inotify is the fast path; the poll catches whatever a watch misses (or a filesystem without one).
    this.poller = setInterval(() => this.poll(), 1000);
  }

  private offsetsFile(instance: number): string {
    return join(this.dir, `${instance}.offsets`);
  }

  private saveOffsets(): void {
    if (this.instance === undefined) return;
    const file = this.offsetsFile(this.instance);
    const committed = { stdout: this.readers.stdout.committed, stderr: this.readers.stderr.committed };
    writeFileSync(`${file}.tmp`, JSON.stringify(committed));
    renameSync(`${file}.tmp`, file);
  }

  /** The process exited: what it wrote last is read, unterminated last lines kept as parts, followers end. */
  end(): void {
    if (this.ended) return;
    this.poll();
    for (const stream of streams) {
      const r = this.readers[stream];
      if (r.partial) this.record([{ time: this.now(), stream, text: r.partial }]);
      r.partial = "";
    }
    this.ended = true;
    for (const w of this.watchers) w.close();
    this.watchers = [];
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
   * `fromStart` first gives what the instance wrote so far, line by line on its stream.
   */
  followText(onText: TextListener, onEnd: () => void, fromStart = false): () => void {
    if (fromStart && this.instance !== undefined) {
      for (const line of this.lines(this.instance)) onText(line.text, line.stream);
      if (!this.ended)
        for (const stream of streams)
          if (this.readers[stream].partial) onText(this.readers[stream].partial, stream);
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
    if (this.ended) return;
    let read = false;
    for (const stream of streams) read = this.pollStream(stream) || read;
    if (read) this.saveOffsets();
  }

  /** Reads what the process wrote since; true when there was something. */
  private pollStream(stream: LogStream): boolean {
    const file = this.files[stream];
    if (!existsSync(file)) return false;
    const r = this.readers[stream];
    const fd = openSync(file, "r");
    let text = "";
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, r.offset);
        if (n <= 0) break;
        const newline = buf.subarray(0, n).lastIndexOf(10);
        if (newline >= 0) r.committed = r.offset + newline + 1;
        r.offset += n;
        // The decoder keeps a character split between two reads for the next one.
        text += r.decoder.write(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    if (!text) return false;
    appendFileSync(this.mergedFile, text);
    for (const l of this.listeners) l.onText?.(text, stream);
    const parts = (r.partial + text).split("\n");
    r.partial = parts.pop() ?? "";
    const time = this.now();
    this.record(parts.map((p) => ({ time, stream, text: `${p}\n` })));
    return true;
  }

  private record(lines: LogLine[]): void {
    if (lines.length === 0 || this.instance === undefined) return;
    appendFileSync(this.file(this.instance), lines.map(formatCriLine).join(""));
    for (const l of this.listeners) l.onLines?.(lines);
  }
}

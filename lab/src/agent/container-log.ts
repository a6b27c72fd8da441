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
  partial: string;
  decoder: StringDecoder;
}

const streams: readonly LogStream[] = ["stdout", "stderr"];
const fresh = (offset = 0): Reader => ({ offset, partial: "", decoder: new StringDecoder("utf8") });

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
    const start = { stdout: size(this.files.stdout), stderr: size(this.files.stderr) };
    // Where this instance's output starts, for a restarted agent's resume: written once per instance.
    writeFileSync(this.startFile(restartCount), JSON.stringify(start));
    this.followFiles(restartCount, start);
  }

  /**
   * Goes on with an instance a previous agent recorded (an adopted container): after the last whole line it
   * recorded (where the instance started, plus the lines its log holds of each stream), so what the process wrote
   * while no agent ran is recorded now, once. Without its start, from the files' ends.
   */
  resume(instance: number): void {
    this.end();
    mkdirSync(this.dir, { recursive: true });
    const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
    let offsets = { stdout: size(this.files.stdout), stderr: size(this.files.stderr) };
    try {
      const start = JSON.parse(readFileSync(this.startFile(instance), "utf8")) as Record<LogStream, number>;
      const recorded = parseCriLog(readFileSync(this.file(instance), "utf8"));
      offsets = { ...start };
      for (const line of recorded) offsets[line.stream] += Buffer.byteLength(line.text);
    } catch {}
    this.followFiles(instance, offsets);
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
    // inotify is the fast path; the poll catches whatever a watch misses (or a filesystem without one).
    this.poller = setInterval(() => this.poll(), 1000);
  }

  private startFile(instance: number): string {
    return join(this.dir, `${instance}.start`);
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
    for (const stream of streams) this.pollStream(stream);
  }

  private pollStream(stream: LogStream): void {
    const file = this.files[stream];
    if (!existsSync(file)) return;
    const r = this.readers[stream];
    const fd = openSync(file, "r");
    let text = "";
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, r.offset);
        if (n <= 0) break;
        r.offset += n;
        // The decoder keeps a character split between two reads for the next one.
        text += r.decoder.write(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    if (!text) return;
    appendFileSync(this.mergedFile, text);
    for (const l of this.listeners) l.onText?.(text, stream);
    const parts = (r.partial + text).split("\n");
    r.partial = parts.pop() ?? "";
    const time = this.now();
    this.record(parts.map((p) => ({ time, stream, text: `${p}\n` })));
  }

  private record(lines: LogLine[]): void {
    if (lines.length === 0 || this.instance === undefined) return;
    appendFileSync(this.file(this.instance), lines.map(formatCriLine).join(""));
    for (const l of this.listeners) l.onLines?.(lines);
  }
}

import { goIPString, parseGoIP } from "@switchyard/basics";
import type { HostsMap, ParseHostsOptions } from "./hosts-map.js";
import { emptyHostsMap, hostsMapSize, lookupIn, parseHosts } from "./hosts-map.js";

/** What the plugin needs to know about the file to decide whether to read it again. */
export interface FileStamp {
  /** Modification time, epoch milliseconds (fractions kept). */
  mtimeMs: number;
  size: number;
}

/** File access, injectable so tests control contents and timestamps. Both throw as node:fs does. */
export interface HostsFiles {
  stat(path: string): FileStamp & { isDirectory: boolean };
  read(path: string): string;
}

/** Told after each re-parse of the file: the combined entry count and the file's modification time. */
export type ReloadListener = (entries: number, mtimeMs: number) => void;

/**
 * The data the plugin answers from: the file's entries (re-read when its mtime or size changes) and the
 * Corefile's inline entries (fixed). Lookups return file entries first, then inline ones.
 */
export class HostsData {
  private file: HostsMap = emptyHostsMap();
  private readonly inline: HostsMap;
  private stamp: FileStamp | undefined;

  constructor(
    readonly path: string,
    private readonly parse: ParseHostsOptions,
    inlineLines: readonly string[],
    private readonly files: HostsFiles,
    private readonly onReload: ReloadListener = () => undefined,
  ) {
    this.inline = inlineLines.length === 0 ? emptyHostsMap() : parseHosts(inlineLines.join("\n"), parse);
  }

  /**
   * Re-reads the file if it changed. A file that cannot be opened keeps what was read before: CoreDNS
   * already warned about it at setup, and a hosts file being rewritten must not blank the answers.
   */
  reload(): void {
    let stamp: FileStamp;
    try {
      stamp = this.files.stat(this.path);
    } catch {
      return;
    }
    if (this.stamp && this.stamp.mtimeMs === stamp.mtimeMs && this.stamp.size === stamp.size) return;
    let text = "";
    try {
      text = this.files.read(this.path);
    } catch {
      // Go reads a directory (or a file failing mid-read) as no lines and still records its stamp.
    }
    this.file = parseHosts(text, this.parse);
    this.stamp = { mtimeMs: stamp.mtimeMs, size: stamp.size };
    this.onReload(hostsMapSize(this.inline) + hostsMapSize(this.file), stamp.mtimeMs);
  }

  lookupV4(host: string): string[] {
    const name = host.toLowerCase();
    return [
      ...lookupIn(this.file.name4, this.file.wild4, name),
      ...lookupIn(this.inline.name4, this.inline.wild4, name),
    ];
  }

  lookupV6(host: string): string[] {
    const name = host.toLowerCase();
    return [
      ...lookupIn(this.file.name6, this.file.wild6, name),
      ...lookupIn(this.inline.name6, this.inline.wild6, name),
    ];
  }

  /** The names for an address in any spelling Go's ParseIP takes; none for anything else. */
  lookupAddr(address: string): string[] {
    const zone = address.indexOf("%");
    const ip = parseGoIP(zone < 0 ? address : address.slice(0, zone));
    if (!ip) return [];
    const key = goIPString(ip);
    return [...(this.file.addr.get(key) ?? []), ...(this.inline.addr.get(key) ?? [])];
  }
}

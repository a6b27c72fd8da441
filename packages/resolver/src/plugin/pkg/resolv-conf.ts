import { readFileSync } from "node:fs";
import { normalizeZone } from "../zones.js";

/**
 * The search list of a resolv.conf(5) text, read as miekg/dns reads it (CoreDNS's parser): the last
 * `search` or `domain` line wins, `domain` without a value empties the list, and nothing else matters
 * here. Elements are normalised (absolute, lower case), as CoreDNS normalises them.
 */
export function searchFromResolvConf(text: string): string[] {
  let search: string[] = [];
  for (const line of text.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === "search") search = fields.slice(1);
    else if (fields[0] === "domain") search = fields.slice(1, 2);
  }
  return search.map(normalizeZone);
}

/** Go's wording for the open errors a resolv.conf commonly meets (`open PATH: no such file or directory`). */
const GO_OPEN_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
};

/**
 * Reads `path` and returns its search list, or throws with Go's *PathError text. A directory opens in Go,
 * and miekg/dns never looks at the scanner's read error, so CoreDNS takes one as an empty file.
 */
export function readSearchList(path: string): string[] {
  try {
    return searchFromResolvConf(readFileSync(path, "utf8"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (code === "EISDIR") return [];
    const text = GO_OPEN_ERRORS[code];
    throw new Error(text ? `open ${path}: ${text}` : (err as Error).message);
  }
}

import type { GoRegex } from "../../plugin/go-regex.js";
import { substitute } from "./regex.js";

/** Maps one name to another; names it does not apply to come back unchanged. */
export type StringRewriter = (src: string) => string;

/** `answer name|value FROM TO`: the regex replacement, for names the pattern matches. */
export function regexRewriter(re: GoRegex, replacement: string): StringRewriter {
  return (src) => substitute(re, src, replacement) ?? src;
}

/**
 * The reverse of a rewritten question (`answer auto`): the rewritten name itself, or any name below it, gets
 * the original name back in its place.
 */
export function remapRewriter(rewritten: string, original: string): StringRewriter {
  return (src) => {
    if (src === rewritten) return original;
    if (src.endsWith(`.${rewritten}`)) return src.slice(0, src.length - rewritten.length) + original;
    return src;
  };
}

/** Swaps a trailing string; a suffix rule's `answer auto` turns its TO suffix back into FROM this way. */
export function suffixRewriter(suffix: string, replacement: string): StringRewriter {
  return (src) => (src.endsWith(suffix) ? src.slice(0, src.length - suffix.length) + replacement : src);
}

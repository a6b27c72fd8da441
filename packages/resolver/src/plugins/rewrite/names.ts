import * as mnemonic from "../../plugin/pkg/mnemonics.js";

/**
 * The mnemonics upstream's rule parser accepts: miekg/dns's tables, looked up upper-cased. They are fuller than
 * what the wire code names, because a Corefile may name any type.
 */
export const typeByName = (name: string): number | undefined => mnemonic.typeByName(name.toUpperCase());
export const classByName = (name: string): number | undefined => mnemonic.classByName(name.toUpperCase());

/** An rcode given as 0..23 or as a mnemonic. */
export function rcodeByName(value: string): number | undefined {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (n <= 23) return n;
  }
  return mnemonic.rcodeByName(value.toUpperCase());
}

// nft prints a rule back in its own canonical words, not in the words kube-proxy (and our renderer) wrote it
// with. The proxier's tracer reads the renderer's words, so a listed rule is translated back first. Each
// rewrite names a form nft 1.0 prints; anything else passes through unchanged, and the tracer says so if it
// cannot follow it.

/** [what nft prints, what the renderer writes]. */
const rewrites: readonly [RegExp, string][] = [
  // `mark set mark or 0x4000` is printed as `meta mark set meta mark | 0x00004000`; xor likewise.
  [/\bmeta mark set meta mark \| (0x[0-9a-f]+)/g, "mark set mark or $1"],
  [/\bmeta mark set meta mark \^ (0x[0-9a-f]+)/g, "mark set mark xor $1"],
  // `mark and 0x4000 != 0` is printed with the zero in full width.
  [/\bmeta mark & (0x[0-9a-f]+) (==|!=) 0x0+\b/g, "mark and $1 $2 0"],
  // The address-and-port map of a numgen DNAT is printed without `addr . port`.
  [/\bdnat (ip6?) to numgen\b/g, "dnat $1 addr . port to numgen"],
  // A single DNAT target may be printed with its family (`dnat ip to 10.0.0.1:80`).
  [/\bdnat ip6? to (?!numgen)/g, "dnat to "],
  // The ICMP type a plain `reject` uses.
  [/\breject with icmpx? (type )?port-unreachable\b/g, "reject"],
];

/** Element lists inside a rule (numgen maps): nft separates them with ", ", the renderer with " , ". */
function respaceInlineMaps(rule: string): string {
  return rule.replace(
    /(numgen random mod \d+ v?map \{ )(.*)( \})/,
    (_, open: string, body: string, close: string) => {
      return `${open}${body.split(/\s*,\s*/).join(" , ")}${close}`;
    },
  );
}

/** Chain names nft quoted (newer versions quote names with "/" in them). */
function unquoteNames(rule: string): string {
  return rule.replace(/\b(jump|goto) "([^"]+)"/g, "$1 $2").replace(/@"([^"]+)"/g, "@$1");
}

/** A rule as nft lists it, in the renderer's words. */
export function rendererRule(listed: string): string {
  let rule = unquoteNames(listed.trim());
  for (const [from, to] of rewrites) rule = rule.replace(from, to);
  return respaceInlineMaps(rule);
}

/** A map element's value as nft lists it (`goto X`, `drop`), in the renderer's words. */
export function rendererVerdict(listed: string): string {
  return unquoteNames(listed.trim());
}

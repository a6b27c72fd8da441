const MAX_BASE = 36;

/**
 * Go's strconv.ParseUint: the value, or the error text Go gives (`strconv.ParseUint: parsing "gg": invalid
 * syntax`). Base 0 reads a 0x / 0o / 0b / 0 prefix and allows `_` between digits.
 */
export function parseUint(s: string, base: number, bitSize: number): bigint | string {
  const fail = (why: string) => `strconv.ParseUint: parsing ${JSON.stringify(s)}: ${why}`;
  if (s === "") return fail("invalid syntax");
  let digits = s;
  let b = base;
  const base0 = base === 0;
  if (base0) {
    b = 10;
    const prefix = /^0([xXoObB])?/.exec(s);
    if (prefix) {
      const letter = prefix[1]?.toLowerCase();
      b = letter === "x" ? 16 : letter === "b" ? 2 : 8;
      digits = s.slice(letter ? 2 : 1);
      if (digits === "" && !letter) return 0n;
    }
  } else if (base < 2 || base > MAX_BASE) {
    return fail(`invalid base ${base}`);
  }
  const size = bitSize === 0 ? 64 : bitSize;
  if (size < 0 || size > 64) return fail(`invalid bit size ${bitSize}`);
  if (base0 && digits.includes("_")) {
    // Go wants every `_` between two digits, or right after the base prefix.
    if (/__|_$/.test(digits) || (digits.startsWith("_") && digits === s)) return fail("invalid syntax");
    digits = digits.replaceAll("_", "");
  }
  if (digits === "") return fail("invalid syntax");
  let n = 0n;
  for (const ch of digits.toLowerCase()) {
    const d = Number.parseInt(ch, MAX_BASE);
    if (Number.isNaN(d) || d >= b) return fail("invalid syntax");
    n = n * BigInt(b) + BigInt(d);
  }
  if (n >= 1n << BigInt(size)) return fail("value out of range");
  return n;
}

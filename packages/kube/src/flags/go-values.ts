// Flag values read as kube-controller-manager's flag library (pflag, on Go's strconv) reads them, so a value
// it accepts is accepted here with the same meaning, and one it refuses is refused.

/** strconv.ParseBool's spellings. */
export function parseGoBool(raw: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(raw)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(raw)) return false;
  return undefined;
}

/**
 * strconv.ParseInt with base 0, as pflag's int flags use it: an optional sign, then decimal, 0x hex, 0o or
 * leading-0 octal, or 0b binary. (Go also allows "_" between digits after a base prefix; that is not read here.)
 */
export function parseGoInt(raw: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(raw);
  if (m === null) return undefined;
  const [, sign, digits = ""] = m;
  let value: number;
  if (/^0[xXoObB]/.test(digits)) value = Number(digits.toLowerCase());
  else if (digits.length > 1 && digits.startsWith("0")) value = Number.parseInt(digits, 8);
  else value = Number(digits);
  return sign === "-" ? -value : value;
}

/** strconv.ParseFloat's decimal and exponent forms (Go's "Inf", "NaN" and hex floats are not read here). */
export function parseGoFloat(raw: string): number | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) return undefined;
  return Number(raw);
}

/**
 * pflag's mapStringBool (--feature-gates): comma-separated key=value pairs, spaces around each trimmed, values
 * read by ParseBool. An error names the pair at fault.
 */
export function parseGoBoolMap(raw: string): Record<string, boolean> | string {
  const out: Record<string, boolean> = {};
  if (raw === "") return out;
  for (const part of raw.split(",")) {
    const pair = part.trim();
    const eq = pair.indexOf("=");
    if (eq < 0) return `missing "=" in "${pair}", want key=true or key=false`;
    const value = parseGoBool(pair.slice(eq + 1).trim());
    if (value === undefined) return `"${pair}" is not key=true or key=false`;
    out[pair.slice(0, eq).trim()] = value;
  }
  return out;
}

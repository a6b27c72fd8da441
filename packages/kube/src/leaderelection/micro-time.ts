/**
 * Formats a time as a meta/v1 MicroTime: RFC 3339 with exactly six fractional
 * digits ("2006-01-02T15:04:05.000000Z"). The apiserver rejects Lease times
 * with any other precision.
 */
export function formatMicroTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000Z`;
}

/** Parses a MicroTime (or any RFC 3339 time) to epoch ms; NaN if unparsable. */
export function parseMicroTime(text: string): number {
  return Date.parse(text);
}

/**
 * Formats a time as a meta/v1 Time: RFC 3339 in UTC to the second ("2006-01-02T15:04:05Z"), what the apiserver
 * writes in creationTimestamp, Event and condition times. MicroTime (six fractional digits) is formatMicroTime.
 */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

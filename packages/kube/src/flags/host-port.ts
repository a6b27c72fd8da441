/** Splits "host:port" ("[::1]:10249" for IPv6), as the apps' address flags take it; undefined when malformed. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? "", port };
}

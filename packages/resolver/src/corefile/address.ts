import { normalizeZone } from "../plugin/zones.js";
import { CorefileError } from "./errors.js";

/** A server block key taken apart: `dns://cluster.local:1053` → zone `cluster.local.`, port 1053. */
export interface ZoneAddress {
  zone: string;
  port: number;
  scheme: "dns";
}

/**
 * Parses one key. Only plain DNS (`dns://` or no scheme) is served; `tls://`, `https://`, `grpc://` and
 * `quic://` are recognised so the error says what is missing rather than misreading the zone.
 */
export function parseZoneAddress(key: string, defaultPort: number, file: string, line: number): ZoneAddress {
  let rest = key;
  const scheme = /^([a-z0-9]+):\/\//.exec(rest);
  if (scheme) {
    if (scheme[1] !== "dns")
      throw new CorefileError(file, line, `${scheme[1]}:// servers are not supported: ${key}`);
    rest = rest.slice(scheme[0].length);
  }
  let port = defaultPort;
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    const portText = rest.slice(colon + 1);
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
      throw new CorefileError(file, line, `invalid port ${JSON.stringify(portText)} in ${key}`);
    }
    port = Number(portText);
    rest = rest.slice(0, colon);
  }
  if (rest.includes("/"))
    throw new CorefileError(file, line, `CIDR server block keys are not supported yet: ${key}`);
  if (rest === "" || /\s/.test(rest))
    throw new CorefileError(file, line, `invalid zone in ${JSON.stringify(key)}`);
  return { zone: normalizeZone(rest), port, scheme: "dns" };
}

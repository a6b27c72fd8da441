/** Go's texts for the errno values a bind fails with (syscall.Errno's Error()). */
const ERRNO_TEXT: Record<string, string> = {
  EADDRINUSE: "address already in use",
  EACCES: "permission denied",
  EADDRNOTAVAIL: "cannot assign requested address",
  EAFNOSUPPORT: "address family not supported by protocol",
};

/**
 * A listener that could not be opened, worded as CoreDNS's fatal line words it: the Go call that failed,
 * then Go's net.OpError, `ListenPacket: listen udp :53: bind: address already in use` or `Listen: listen
 * tcp 127.0.0.1:53: ...`. `host` is the bound address as the Corefile gave it ("" for every address). The
 * errno code stays on the error.
 */
export function listenError(
  protocol: "udp" | "tcp",
  host: string,
  port: number,
  cause: NodeJS.ErrnoException,
): NodeJS.ErrnoException {
  const call = protocol === "udp" ? "ListenPacket" : "Listen";
  // As Go's net.JoinHostPort writes it: an IPv6 address in brackets.
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const text = (cause.code && ERRNO_TEXT[cause.code]) ?? cause.message;
  const err: NodeJS.ErrnoException = new Error(`${call}: listen ${protocol} ${address}: bind: ${text}`, {
    cause,
  });
  if (cause.code !== undefined) err.code = cause.code;
  return err;
}

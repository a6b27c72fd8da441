import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";

/** Who a request comes from: its client certificate's CN, and its O values plus system:authenticated. */
export interface RequestUser {
  name: string;
  groups: string[];
}

type Subject = { CN?: string | string[]; O?: string | string[] } | undefined;

const values = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * The user of a verified client certificate, as the kubelet's x509 authenticator reads it: Go fills the subject's
 * CommonName attribute by attribute, so of several CNs the last one is the user; groups are every O.
 */
export function certificateUser(subject: Subject): RequestUser {
  return { name: values(subject?.CN).at(-1) ?? "", groups: [...values(subject?.O), "system:authenticated"] };
}

/**
 * The kubelet's authentication as kubeadm configures it (x509 against the lab CA, anonymous off): the user of a
 * client certificate the CA signed, or undefined, which the kubelet answers 401 Unauthorized. A certificate
 * without a CN names nobody: upstream's CommonNameUserConversion does not authenticate it, and with no other
 * authenticator left the request is unauthenticated, not a user "".
 */
export function authenticatedUser(socket: Socket): RequestUser | undefined {
  const tls = socket as TLSSocket;
  if (!tls.authorized) return undefined;
  const user = certificateUser(tls.getPeerCertificate().subject);
  return user.name === "" ? undefined : user;
}

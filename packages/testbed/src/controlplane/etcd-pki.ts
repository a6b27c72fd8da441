import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, restrictFile } from "../private-files.js";
import {
  allSigned,
  type CertPair,
  certIsCurrent,
  pairIn,
  sanLine,
  selfSignedCa,
  signedCert,
  usages,
} from "./openssl.js";

/**
 * etcd's own CA and certificates, named and placed as kubeadm makes them (cmd/kubeadm/app/phases/certs/certlist.go):
 * pki/etcd/{ca,server,peer,healthcheck-client} and pki/apiserver-etcd-client, the apiserver's way in.
 */
export interface EtcdPki {
  caCert: string;
  caKey: string;
  server: CertPair;
  peer: CertPair;
  healthcheckClient: CertPair;
  apiserverClient: CertPair;
}

export interface EtcdPkiOptions {
  /** The addresses etcd listens on, put in its serving and peer certificates beside 127.0.0.1 and ::1. */
  etcdIps: readonly string[];
}

/** The etcd member's name (--name): kubeadm names it after the node, and so its server and peer certificates. */
export const etcdMemberName = "switchyard-lab";

export function etcdPkiPaths(dir: string): EtcdPki {
  return {
    caCert: join(dir, "etcd", "ca.crt"),
    caKey: join(dir, "etcd", "ca.key"),
    server: pairIn(dir, "etcd/server"),
    peer: pairIn(dir, "etcd/peer"),
    healthcheckClient: pairIn(dir, "etcd/healthcheck-client"),
    apiserverClient: pairIn(dir, "apiserver-etcd-client"),
  };
}

/** The client certificates signed by etcd's CA: kubeadm's CNs, client use only. */
const clients: ReadonlyArray<[name: string, commonName: string]> = [
  ["etcd/healthcheck-client", "kube-etcd-healthcheck-client"],
  ["apiserver-etcd-client", "kube-apiserver-etcd-client"],
];

/**
 * Makes what is missing under `dir` (the lab's pki folder): etcd's CA, its serving and peer certificates (CN the
 * member's name; SANs localhost, the name, the listen addresses, 127.0.0.1 and ::1, as kubeadm's getAltNames; both
 * server and client use, as kubeadm issues them), and the two client certificates. A new CA signs all of them
 * anew; serving and peer certificates are made again when their names change.
 */
export async function ensureEtcdPki(dir: string, options: EtcdPkiOptions): Promise<EtcdPki> {
  ensurePrivateDir(join(dir, "etcd"));
  const pki = etcdPkiPaths(dir);
  for (const pair of [pki.server, pki.peer, pki.healthcheckClient, pki.apiserverClient])
    restrictFile(pair.key);
  restrictFile(pki.caKey);
  const fresh = !existsSync(pki.caCert) || !existsSync(pki.caKey);
  if (fresh) await selfSignedCa(dir, "etcd/ca", "etcd-ca");
  const names = sanLine(["127.0.0.1", "::1", ...options.etcdIps], ["localhost", etcdMemberName]);
  const ext = `${names}\n${usages.serverAndClient}`;
  const signing = ["etcd/server", "etcd/peer"]
    .filter((name) => fresh || !certIsCurrent(dir, name, ext))
    .map((name) => signedCert(dir, "etcd/ca", name, `/CN=${etcdMemberName}`, ext));
  for (const [name, commonName] of clients) {
    if (fresh || !existsSync(join(dir, `${name}.crt`)))
      signing.push(signedCert(dir, "etcd/ca", name, `/CN=${commonName}`, usages.client));
  }
  await allSigned(signing);
  return pki;
}

import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, restrictFile } from "../private-files.js";
import { type EtcdPki, type EtcdPkiOptions, ensureEtcdPki, etcdPkiPaths } from "./etcd-pki.js";
import {
  allSigned,
  type CertPair,
  certIsCurrent,
  openssl,
  pairIn,
  sanLine,
  selfSignedCa,
  signedCert,
  usages,
} from "./openssl.js";

/** Paths of the lab's certificates and keys, all under <state>/pki (etcd's under <state>/pki/etcd, kubeadm's layout). */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  saKey: string;
  saPub: string;
  clients: Record<ClientIdentity, CertPair>;
  etcd: EtcdPki;
}

export type ClientIdentity = "admin" | "controller-manager" | "scheduler" | "apiserver-kubelet-client";

/** Who each client certificate speaks for: the CN is the user, O the groups RBAC binds. */
const clientSubjects: Record<ClientIdentity, string> = {
  admin: "/O=system:masters/CN=kubernetes-admin",
  "controller-manager": "/CN=system:kube-controller-manager",
  scheduler: "/CN=system:kube-scheduler",
  // How the apiserver authenticates to kubelets (logs, node proxy), as kubeadm names it.
  "apiserver-kubelet-client": "/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client",
};

export interface PkiOptions extends EtcdPkiOptions {
  /** Extra subjectAltNames for the serving certificate, e.g. the first service IP or a lab address. */
  ips: readonly string[];
  dnsNames: readonly string[];
}

export function pkiPaths(dir: string): Pki {
  return {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    saKey: join(dir, "sa.key"),
    saPub: join(dir, "sa.pub"),
    clients: {
      admin: pairIn(dir, "admin"),
      "controller-manager": pairIn(dir, "controller-manager"),
      scheduler: pairIn(dir, "scheduler"),
      "apiserver-kubelet-client": pairIn(dir, "apiserver-kubelet-client"),
    },
    etcd: etcdPkiPaths(dir),
  };
}

/**
 * Creates a CA, the apiserver's serving certificate, client certificates, the service-account key pair and etcd's
 * certificates (etcd-pki.ts), or reuses them when they exist and the serving certificates still cover the wanted
 * names. The folder is 0700 and every key 0600, including those a looser, older folder holds.
 */
export async function ensurePki(dir: string, options: PkiOptions): Promise<Pki> {
  ensurePrivateDir(dir);
  const pki = pkiPaths(dir);
  for (const key of [pki.caKey, pki.saKey, pki.servingKey, ...Object.values(pki.clients).map((c) => c.key)])
    restrictFile(key);
  const fresh = !existsSync(pki.caCert) || !existsSync(pki.saKey) || !existsSync(pki.saPub);
  if (fresh) await allSigned([selfSignedCa(dir, "ca", "switchyard-lab-ca"), serviceAccountKeys(dir, pki)]);
  // Signed side by side (openssl's start-up dominates): every client missing, so a state folder from before a
  // client existed gets just that one; the serving certificate when its names changed; etcd's.
  const signing = Object.entries(clientSubjects)
    .filter(([name]) => fresh || !existsSync(pki.clients[name as ClientIdentity].cert))
    .map(([name, subject]) => signedCert(dir, "ca", name, subject, usages.client));
  const servingExt = `${sanLine(options.ips, options.dnsNames)}\n${usages.server}`;
  if (fresh || !certIsCurrent(dir, "apiserver", servingExt))
    signing.push(signedCert(dir, "ca", "apiserver", "/CN=kube-apiserver", servingExt));
  await allSigned([...signing, ensureEtcdPki(dir, options)]);
  return pki;
}

/** The service-account token signing key (sa.key, 0600) and its public half (sa.pub), as kubeadm names them. */
async function serviceAccountKeys(dir: string, pki: Pki): Promise<void> {
  await openssl(["genrsa", "-out", "sa.key", "2048"], dir, ["sa.key"]);
  await openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir, ["sa.pub"]);
}

/**
 * A node's kubelet serving certificate, signed by the lab CA in `dir` (the control plane's pki folder): what a
 * kubelet gets through its serving CSR, made directly since the lab holds the CA. SANs: the node's IP and name,
 * the names the apiserver may dial (--kubelet-preferred-address-types). Reused while its names do not change.
 */
export async function ensureKubeletServingCert(
  dir: string,
  node: { name: string; ip: string },
): Promise<CertPair> {
  if (!existsSync(join(dir, "ca.key")))
    throw new Error(`no lab CA in ${dir}: bring the control plane up first`);
  const name = `kubelet-${node.name}`;
  const ext = `${sanLine([node.ip], [node.name])}\n${usages.server}`;
  const paths = pairIn(dir, name);
  restrictFile(paths.key);
  if (!certIsCurrent(dir, name, ext)) await signedCert(dir, "ca", name, `/CN=system:node:${node.name}`, ext);
  return paths;
}

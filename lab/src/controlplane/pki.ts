import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { cannotWrite, temporaryPath } from "../write-file.js";

const execFileAsync = promisify(execFile);

/** Paths of the lab's certificates and keys, all under <state>/pki. */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  saKey: string;
  saPub: string;
  clients: Record<ClientIdentity, { cert: string; key: string }>;
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

/**
 * Runs openssl in `cwd`. The files it writes are named in `outputs` (as they appear in `args`): OpenSSL 3.0 exits
 * 0 leaving an empty file when a write fails on a full disk, so each is written under a temporary name, checked to
 * be a whole PEM file, and only then renamed into place. A file that exists is therefore complete.
 */
async function openssl(args: string[], cwd: string, outputs: readonly string[] = []): Promise<void> {
  const temporary = (name: string) => join(cwd, temporaryPath(name));
  try {
    try {
      await execFileAsync(
        "openssl",
        args.map((a) => (outputs.includes(a) ? temporaryPath(a) : a)),
        { cwd },
      );
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === "ENOENT") throw new Error("openssl not found: install it (apt-get install -y openssl)");
      throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim().split("\n")[0]}`);
    }
    for (const name of outputs) assertWholePem(temporary(name), join(cwd, name));
    for (const name of outputs) renameSync(temporary(name), join(cwd, name));
  } finally {
    for (const name of outputs) rmSync(temporary(name), { force: true });
  }
}

/** openssl wrote `written` (to become `path`) as a whole PEM file; else why not, as writeFileAtomic says it. */
function assertWholePem(written: string, path: string): void {
  if (/-----END [A-Z ]+-----\s*$/.test(readFileSync(written, "utf8"))) return;
  const full = statfsSync(written).bavail === 0;
  throw new Error(
    `cannot write ${path}: ${full ? "no space left on device" : "openssl wrote an incomplete file"}`,
  );
}

export interface PkiOptions {
  /** Extra subjectAltNames for the serving certificate, e.g. the first service IP or a lab address. */
  ips: readonly string[];
  dnsNames: readonly string[];
}

export function pkiPaths(dir: string): Pki {
  const pair = (name: string) => ({ cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) });
  return {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    saKey: join(dir, "sa.key"),
    saPub: join(dir, "sa.pub"),
    clients: {
      admin: pair("admin"),
      "controller-manager": pair("controller-manager"),
      scheduler: pair("scheduler"),
      "apiserver-kubelet-client": pair("apiserver-kubelet-client"),
    },
  };
}

const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/**
 * A key and a certificate signed by the lab CA. Serials are random: the CA's serial file would be written in
 * place by openssl (and left empty on a full disk), and node agents sign at the same time, where concurrent
 * writers of one serial file could hand out a serial twice. `<name>.ext` records what the certificate was made
 * for (its currency is judged by it), so it is put in place last, once the certificate is.
 */
async function signedCert(pki: Pki, name: string, subject: string, extensions: string): Promise<void> {
  const cwd = pki.dir;
  const ext = join(cwd, `${name}.ext`);
  try {
    try {
      writeFileSync(temporaryPath(ext), extensions);
    } catch (err) {
      throw cannotWrite(ext, err);
    }
    await openssl(
      ["req", "-new", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject],
      cwd,
      [`${name}.key`, `${name}.csr`],
    );
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        `0x${randomBytes(16).toString("hex")}`,
        "-days",
        "3650",
      ].concat(["-out", `${name}.crt`, "-extfile", temporaryPath(ext)]),
      cwd,
      [`${name}.crt`],
    );
    renameSync(temporaryPath(ext), ext);
  } finally {
    rmSync(temporaryPath(ext), { force: true });
  }
}

/**
 * Creates a CA, the apiserver's serving certificate, client certificates and the service-account key pair,
 * or reuses them when they exist and the serving certificate already covers the wanted names.
 */
export async function ensurePki(dir: string, options: PkiOptions): Promise<Pki> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pki = pkiPaths(dir);
  const sans = [...new Set(options.ips)]
    .map((ip) => `IP:${ip}`)
    .concat([...new Set(options.dnsNames)].map((d) => `DNS:${d}`));
  const sanLine = `subjectAltName=${sans.join(",")}`;
  const sanFile = join(dir, "apiserver.ext");
  const fresh = !existsSync(pki.caCert) || !existsSync(pki.saKey) || !existsSync(pki.saPub);
  if (fresh) {
    await openssl(
      ["req", "-x509", "-new", ...ecKey, "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650"].concat([
        "-subj",
        "/CN=switchyard-lab-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
      ]),
      dir,
      ["ca.key", "ca.crt"],
    );
    await openssl(["genrsa", "-out", "sa.key", "2048"], dir, ["sa.key"]);
    await openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir, ["sa.pub"]);
  }
  // Checked one by one, so a state folder from before a client existed gets just the missing one.
  for (const [name, subject] of Object.entries(clientSubjects)) {
    if (fresh || !existsSync(pki.clients[name as ClientIdentity].cert)) {
      await signedCert(
        pki,
        name,
        subject,
        "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
      );
    }
  }
  const servingExt = `${sanLine}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`;
  const servingCurrent =
    existsSync(pki.servingCert) && existsSync(sanFile) && readFileSync(sanFile, "utf8") === servingExt;
  if (fresh || !servingCurrent) {
    await signedCert(pki, "apiserver", "/CN=kube-apiserver", servingExt);
  }
  return pki;
}

/**
 * A node's kubelet serving certificate, signed by the lab CA in `dir` (the control plane's pki folder): what a
 * kubelet gets through its serving CSR, made directly since the lab holds the CA. SANs: the node's IP and name,
 * the names the apiserver may dial (--kubelet-preferred-address-types). Reused while its names do not change.
 */
export async function ensureKubeletServingCert(
  dir: string,
  node: { name: string; ip: string },
): Promise<{ cert: string; key: string }> {
  if (!existsSync(join(dir, "ca.key")))
    throw new Error(`no lab CA in ${dir}: bring the control plane up first`);
  const name = `kubelet-${node.name}`;
  const ext = `subjectAltName=IP:${node.ip},DNS:${node.name}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`;
  const paths = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const extFile = join(dir, `${name}.ext`);
  const current = existsSync(paths.cert) && existsSync(extFile) && readFileSync(extFile, "utf8") === ext;
  if (!current) await signedCert(pkiPaths(dir), name, `/CN=system:node:${node.name}`, ext);
  return paths;
}

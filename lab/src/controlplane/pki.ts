import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

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

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync("openssl", args, { cwd });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") throw new Error("openssl not found: install it (apt-get install -y openssl)");
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim().split("\n")[0]}`);
  }
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
 * `serial` "random" signs without the CA's serial file, for certificates that node agents make at the same time
 * (concurrent writers of ca.srl could hand out one serial twice).
 */
async function signedCert(
  pki: Pki,
  name: string,
  subject: string,
  extensions: string,
  serial: "file" | "random" = "file",
): Promise<void> {
  const cwd = pki.dir;
  writeFileSync(join(cwd, `${name}.ext`), extensions);
  await openssl(
    ["req", "-new", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject],
    cwd,
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
      ...(serial === "file" ? ["-CAcreateserial"] : ["-set_serial", `0x${randomBytes(16).toString("hex")}`]),
      "-days",
      "3650",
    ].concat(["-out", `${name}.crt`, "-extfile", `${name}.ext`]),
    cwd,
  );
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
  const fresh = !existsSync(pki.caCert) || !existsSync(pki.saKey);
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
    );
    await openssl(["genrsa", "-out", "sa.key", "2048"], dir);
    await openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
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
  if (fresh || !existsSync(sanFile) || readFileSync(sanFile, "utf8") !== servingExt) {
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
  if (!current) await signedCert(pkiPaths(dir), name, `/CN=system:node:${node.name}`, ext, "random");
  return paths;
}

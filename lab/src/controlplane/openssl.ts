import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { restrictFile } from "../private-files.js";

const execFileAsync = promisify(execFile);

export async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync("openssl", args, { cwd });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") throw new Error("openssl not found: install it (apt-get install -y openssl)");
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim().split("\n")[0]}`);
  }
}

/** A certificate and its key, as paths. */
export interface CertPair {
  cert: string;
  key: string;
}

/** `name`.crt and `name`.key under `dir`; `name` may hold a subfolder ("etcd/server"). */
export const pairIn = (dir: string, name: string): CertPair => ({
  cert: join(dir, `${name}.crt`),
  key: join(dir, `${name}.key`),
});

const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A self-signed CA, `name`.crt and `name`.key under `dir`, valid ten years. */
export async function selfSignedCa(dir: string, name: string, commonName: string): Promise<void> {
  restrictFile(join(dir, `${name}.key`));
  await openssl(
    [
      "req",
      "-x509",
      "-new",
      ...ecKey,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.crt`,
      "-days",
      "3650",
    ].concat([
      "-subj",
      `/CN=${commonName}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    ]),
    dir,
  );
  restrictFile(join(dir, `${name}.key`));
}

/** What a signed certificate is for, written as openssl's extension lines. */
export const usages = {
  client: "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
  server: "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
  /** etcd's serving and peer certificates: both ends of a connection, as kubeadm issues them. */
  serverAndClient:
    "extendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n",
};

/**
 * A certificate `name`.crt with a new key `name`.key under `dir`, signed by the CA `ca` (a name under `dir`, e.g.
 * "ca" or "etcd/ca"), its extensions kept beside it in `name`.ext (callers compare them to see when a certificate
 * must be made again). The serial is random, as kubeadm's are, so certificates can be signed at the same time (a
 * serial file shared by concurrent signers could hand out one serial twice).
 */
export async function signedCert(
  dir: string,
  ca: string,
  name: string,
  subject: string,
  extensions: string,
): Promise<void> {
  writeFileSync(join(dir, `${name}.ext`), extensions);
  const key = join(dir, `${name}.key`);
  // openssl keeps the mode of a file it overwrites: a key from an older, looser folder is tightened first.
  restrictFile(key);
  await openssl(
    ["req", "-new", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject],
    dir,
  );
  restrictFile(key);
  await openssl(
    ["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`]
      .concat(["-set_serial", `0x${randomBytes(16).toString("hex")}`, "-days", "3650"])
      .concat(["-out", `${name}.crt`, "-extfile", `${name}.ext`]),
    dir,
  );
}

/** `subjectAltName=IP:...,DNS:...` with each name once. */
export function sanLine(ips: readonly string[], dnsNames: readonly string[]): string {
  const sans = [...new Set(ips)]
    .map((ip) => `IP:${ip}`)
    .concat([...new Set(dnsNames)].map((d) => `DNS:${d}`));
  return `subjectAltName=${sans.join(",")}`;
}

/** Whether `name`.crt exists and was made with these extensions (its names unchanged). */
export function certIsCurrent(dir: string, name: string, extensions: string): boolean {
  const ext = join(dir, `${name}.ext`);
  return existsSync(join(dir, `${name}.crt`)) && existsSync(ext) && readFileSync(ext, "utf8") === extensions;
}

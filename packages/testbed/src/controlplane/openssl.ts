import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { restrictFile } from "../private-files.js";
import { cannotWrite, temporaryPath } from "../write-file.js";

const execFileAsync = promisify(execFile);

/**
 * Runs openssl in `cwd`. The files it writes are named in `outputs` (as they appear in `args`): OpenSSL 3.0 exits
 * 0 leaving an empty file when a write fails on a full disk, so each is written under a temporary name, checked to
 * be a whole PEM file, and only then renamed into place. A file that exists is therefore complete; a key is made
 * 0600 before it gets its name.
 */
export async function openssl(args: string[], cwd: string, outputs: readonly string[] = []): Promise<void> {
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
    for (const name of outputs) {
      if (name.endsWith(".key")) restrictFile(temporary(name));
      renameSync(temporary(name), join(cwd, name));
    }
  } finally {
    for (const name of outputs) rmSync(temporary(name), { force: true });
  }
}

/**
 * Waits for every openssl run started side by side, then fails with the first error. Promise.all would fail at
 * the first one while the others still write their temporary files: the caller would report a full disk and
 * leave those files behind.
 */
export async function allSigned(work: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** openssl wrote `written` (to become `path`) as a whole PEM file; else why not, as writeFileAtomic says it. */
function assertWholePem(written: string, path: string): void {
  if (/-----END [A-Z ]+-----\s*$/.test(readFileSync(written, "utf8"))) return;
  // openssl says nothing of the failed write. Files signed beside this one free their temporary files when they
  // fail too, so by now the filesystem may have a little room again: nearly full counts as full.
  const fs = statfsSync(written);
  const full = fs.bavail * fs.bsize < 1024 * 1024;
  throw new Error(
    `cannot write ${path}: ${full ? "no space left on device" : "openssl wrote an incomplete file"}`,
  );
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
    [`${name}.key`, `${name}.crt`],
  );
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
 * serial file shared by concurrent signers could hand out one serial twice, and openssl would write it in place).
 * `name`.ext is put in place last, once the certificate is, since it says the certificate is current.
 */
export async function signedCert(
  dir: string,
  ca: string,
  name: string,
  subject: string,
  extensions: string,
): Promise<void> {
  const ext = join(dir, `${name}.ext`);
  const extDraft = temporaryPath(ext);
  try {
    try {
      writeFileSync(extDraft, extensions);
    } catch (err) {
      throw cannotWrite(ext, err);
    }
    await openssl(
      ["req", "-new", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject],
      dir,
      [`${name}.key`, `${name}.csr`],
    );
    await openssl(
      ["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`]
        .concat(["-set_serial", `0x${randomBytes(16).toString("hex")}`, "-days", "3650"])
        .concat(["-out", `${name}.crt`, "-extfile", extDraft]),
      dir,
      [`${name}.crt`],
    );
    renameSync(extDraft, ext);
  } finally {
    rmSync(extDraft, { force: true });
  }
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

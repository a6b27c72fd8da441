import { execFile } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/**
 * The self-signed localhost pair agnhost's porter serves TLS with (/localhost.crt and /localhost.key in upstream's
 * image, which ships a fixed pair): made once per lab in `dir`, in a folder built aside and renamed into place,
 * so agents racing for it never mix one's certificate with another's key.
 */
export async function ensureLocalhostPair(dir: string): Promise<{ cert: string; key: string }> {
  const paths = { cert: join(dir, "localhost.crt"), key: join(dir, "localhost.key") };
  if (existsSync(paths.cert)) return paths;
  const aside = `${dir}.${process.pid}.tmp`;
  rmSync(aside, { recursive: true, force: true });
  mkdirSync(aside, { recursive: true });
  try {
    await execFileAsync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=localhost"]
        .concat(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .concat(["-keyout", join(aside, "localhost.key"), "-out", join(aside, "localhost.crt")]),
    );
    renameSync(aside, dir);
  } catch (err) {
    rmSync(aside, { recursive: true, force: true });
    if (!existsSync(paths.cert))
      throw new Error(`porter's TLS pair in ${dir}: ${(err as Error).message.split("\n")[0]}`);
  }
  return paths;
}

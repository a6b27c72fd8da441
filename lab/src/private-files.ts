// The lab's secrets stay its owner's: state folders 0700, keys, tokens and kubeconfigs 0600, as kubeadm leaves
// /var/lib/etcd and the keys under /etc/kubernetes/pki. A mode given to mkdir or open applies only to what they
// create, so folders and files made by an earlier version (or by hand) are tightened here too.
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";

/** Folders holding state: only their owner may list or enter them. */
export const privateDirMode = 0o700;
/** Keys, tokens, kubeconfigs: only their owner may read them. */
export const privateFileMode = 0o600;

/** Clears the group and other bits of `path` when any is set; an owner's own bits are left as they are. */
function tighten(path: string, mode: number): void {
  const current = statSync(path).mode & 0o777;
  if ((current & 0o077) !== 0) chmodSync(path, current & mode);
}

/** Makes `dir` (and missing parents) 0700, or tightens it to 0700 when it exists with group or other bits. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: privateDirMode });
  tighten(dir, privateDirMode);
}

/** Writes a secret 0600: created so, and an existing file looser than that is tightened before it is written. */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  restrictFile(path);
  writeFileSync(path, data, { mode: privateFileMode });
}

/** Tightens a secret another program writes (openssl's keys) to 0600; nothing to do when it does not exist. */
export function restrictFile(path: string): void {
  try {
    tighten(path, privateFileMode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

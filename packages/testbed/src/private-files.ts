// The lab's secrets stay its owner's: state folders 0700, keys, tokens and kubeconfigs 0600, as kubeadm leaves
// /var/lib/etcd and the keys under /etc/kubernetes/pki. A mode given to mkdir or open applies only to what they
// create, so folders and files made by an earlier version (or by hand) are tightened here too.
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { writeFileAtomic } from "./write-file.js";

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

/**
 * Writes a secret 0600 and whole: a new file made so is renamed over the old one, so a looser older file goes
 * with it and a full disk leaves the old content, never part of the new.
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  writeFileAtomic(path, data, { mode: privateFileMode });
}

/** Tightens a secret another program writes (openssl's keys) to 0600; nothing to do when it does not exist. */
export function restrictFile(path: string): void {
  try {
    tighten(path, privateFileMode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

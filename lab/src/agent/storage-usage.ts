// What a pod's containers hold on disk, measured as the kubelet's stats provider reports it to the eviction manager:
// each container's writable layer and its logs, each emptyDir's files.
import { lstatSync, readdirSync, statfsSync } from "node:fs";
import { join } from "node:path";

/** Bytes a folder's files take on disk (allocated blocks, as du counts them); 0 when it is missing. */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      total += st.blocks * 512;
      if (st.isDirectory()) total += dirBytes(path);
    } catch {
      // Removed while we looked: it holds nothing now.
    }
  }
  return total;
}

/**
 * The bytes in a running container's writable layer: its root is an overlay whose upper layer is a tmpfs of its
 * own (sandbox-command.ts), and statfs of an overlay reports its upper file system. Seen through /proc/<pid>/root,
 * since that tmpfs is mounted only in the container's mount namespace. 0 when the process is gone.
 */
export function writableLayerBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fs = statfsSync(`/proc/${pid}/root`);
    return (fs.blocks - fs.bfree) * fs.bsize;
  } catch {
    return 0;
  }
}

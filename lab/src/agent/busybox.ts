import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** The host's static busybox (Debian's busybox-static), which the lab runs for the busybox image. */
export interface Busybox {
  path: string;
  /** The applets it was built with (`busybox --list`): the commands the busybox image has. */
  applets: ReadonlySet<string>;
}

const hostPath = "/bin/busybox";
let found: Busybox | null | undefined;

/**
 * The host's busybox, read once; undefined when it is not installed. Debian builds it with the standalone shell
 * (FEATURE_SH_STANDALONE, PREFER_APPLETS), so its `sh` runs applets before anything on PATH: `sh -c 'nslookup x;
 * wget ...'` in the container uses busybox's applets, as in the image, although the host's root is the filesystem.
 */
export function hostBusybox(): Busybox | undefined {
  if (found === undefined) {
    found = existsSync(hostPath)
      ? {
          path: hostPath,
          applets: new Set(
            execFileSync(hostPath, ["--list"], { encoding: "utf8" }).split("\n").filter(Boolean),
          ),
        }
      : null;
  }
  return found ?? undefined;
}

import { readFileSync } from "node:fs";

/** mountinfo escapes space, tab, newline and backslash in paths as three octal digits. */
const unescapeOctal = (path: string) =>
  path.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/**
 * The mount points of the mounts whose parent is the root mount, in mountinfo's order (a parent before its
 * children): what a container's root, an overlay of the root filesystem alone, has to have bound in (with their
 * own children) to show the files the host shows. The root is the topmost mount at "/".
 */
export function topLevelMounts(mountinfo: string): string[] {
  const entries = mountinfo
    .split("\n")
    .map((line) => line.split(" "))
    .filter((f) => f.length >= 5)
    .map(([id = "", parent = "", , , point = ""]) => ({ id, parent, point: unescapeOctal(point) }));
  const root = entries.filter((e) => e.point === "/").at(-1);
  if (!root) return [];
  return entries.filter((e) => e.parent === root.id && e.point !== "/").map((e) => e.point);
}

/** This process's top-level mounts (the agent's mount namespace is the host's). */
export function hostTopLevelMounts(): string[] {
  return topLevelMounts(readFileSync("/proc/self/mountinfo", "utf8"));
}

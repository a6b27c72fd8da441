// The real SettingFiles: /proc/sys and /sys/module through node:fs. Kept apart from the
// logic so that tests never touch the host's kernel.
import { readFile, writeFile } from "node:fs/promises";
import type { SettingFiles } from "./node-setting.js";

export function procFiles(): SettingFiles {
  return {
    read: (path) => readFile(path, "utf8"),
    write: (path, text) => writeFile(path, text),
  };
}

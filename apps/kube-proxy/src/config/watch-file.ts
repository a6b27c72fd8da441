import { type FSWatcher, readFileSync, watch } from "node:fs";
import { dirname } from "node:path";

/**
 * Calls `changed` once when the config file's content is no longer `loaded`: upstream kube-proxy watches its
 * --config file and exits when it is written or renamed (options.go initWatcher), so that the kubelet restarts
 * it with the new ConfigMap. A kubelet updates a ConfigMap volume by swapping a symlink in the file's folder,
 * so the folder is watched too; an event whose file still holds the same text (a chmod, a touch) is not a change.
 * Returns the stop function.
 */
export function watchConfigFile(path: string, loaded: string, changed: () => void): () => void {
  const watchers: FSWatcher[] = [];
  let done = false;
  const stop = () => {
    done = true;
    for (const w of watchers) w.close();
  };
  const check = () => {
    if (done) return;
    let now: string | undefined;
    try {
      now = readFileSync(path, "utf8");
    } catch {
      now = undefined;
    }
    if (now === loaded) return;
    stop();
    changed();
  };
  for (const target of [path, dirname(path)]) {
    try {
      watchers.push(watch(target, { persistent: false }, check));
    } catch {
      // A folder that cannot be watched leaves the file's own watch.
    }
  }
  return stop;
}

import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type HttpRestClient, isNotFound } from "@switchyard/kube";
import type { ConfigMap } from "kubernetes-types/core/v1.js";
import type { VolumePlan } from "./volumes.js";

/**
 * Makes a volume plan real before the container starts: ConfigMap keys written as files (read once at start; a
 * changed ConfigMap reaches a pod when it restarts), hostPath sources created when their type asks for it, empty
 * dirs made. Mount points are made inside the container's own root, never on the host (sandbox-command.ts).
 */
export async function prepareVolumes(
  plan: VolumePlan,
  namespace: string,
  d: { client: HttpRestClient },
): Promise<void> {
  for (const cm of plan.configMaps) {
    let data: Record<string, string> = {};
    try {
      const obj = await d.client.call<ConfigMap>(
        "GET",
        `/api/v1/namespaces/${namespace}/configmaps/${cm.name}`,
      );
      data = obj.data ?? {};
    } catch (err) {
      if (!(isNotFound(err) && cm.optional))
        throw new Error(`configmap ${namespace}/${cm.name}: ${(err as Error).message}`);
    }
    mkdirSync(cm.dir, { recursive: true });
    const items = cm.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const { key, path } of items) {
      const value = data[key];
      if (value === undefined) throw new Error(`configmap ${namespace}/${cm.name} has no key ${key}`);
      mkdirSync(dirname(join(cm.dir, path)), { recursive: true });
      writeFileSync(join(cm.dir, path), value, { mode: 0o644 });
    }
  }
  for (const dir of plan.emptyDirs) mkdirSync(dir, { recursive: true });
  for (const hp of [...plan.hostPaths]) {
    if (!existsSync(hp.path)) {
      if (hp.create === "dir") mkdirSync(hp.path, { recursive: true });
      else if (hp.create === "file") {
        mkdirSync(dirname(hp.path), { recursive: true });
        writeFileSync(hp.path, "", { flag: "a" });
      } else {
        // An untyped hostPath is not checked by the kubelet; a missing one (/lib/modules in a container) is
        // left out rather than created on the host, and the container sees the host's path as it is.
        plan.unsupported.push(`hostPath ${hp.path} (missing on this host; not mounted)`);
        plan.hostPaths.splice(plan.hostPaths.indexOf(hp), 1);
        plan.mounts = plan.mounts.filter((m) => m.source !== hp.path);
        continue;
      }
    }
    const file = hp.file || !statSync(hp.path).isDirectory();
    hp.file = file;
    for (const m of plan.mounts) if (m.source === hp.path) m.file = file;
  }
}

import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type HttpRestClient, isNotFound } from "@switchyard/kube";
import type { ConfigMap, Pod, Secret } from "kubernetes-types/core/v1.js";
import { fieldValue, requestPodToken, resourceFieldValue } from "./pod-files.js";
import {
  applyAccess,
  emptyDirAccess,
  type FileAccess,
  fileAccess,
  tokenAccess,
  volumeOwners,
} from "./volume-ownership.js";
import type { FileSetVolume, FileSource, VolumePlan } from "./volumes.js";

/** What the files of a file-set volume are made from: the API, the pod, the container that mounts it. */
export interface FileContext {
  client: HttpRestClient;
  pod: Pod;
  container: string;
}

/** A ConfigMap's or Secret's data as text bytes; undefined when it is missing and optional. */
async function keyedData(
  source: Extract<FileSource, { kind: "configMap" | "secret" }>,
  c: FileContext,
): Promise<Record<string, Buffer> | undefined> {
  const ns = c.pod.metadata?.namespace ?? "default";
  const resource = source.kind === "configMap" ? "configmaps" : "secrets";
  try {
    if (source.kind === "configMap") {
      const obj = await c.client.call<ConfigMap>(
        "GET",
        `/api/v1/namespaces/${ns}/${resource}/${source.name}`,
      );
      const binary = Object.entries(obj.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64")]);
      const text = Object.entries(obj.data ?? {}).map(([k, v]) => [k, Buffer.from(v)]);
      return Object.fromEntries([...text, ...binary]);
    }
    const obj = await c.client.call<Secret>("GET", `/api/v1/namespaces/${ns}/${resource}/${source.name}`);
    return Object.fromEntries(Object.entries(obj.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64")]));
  } catch (err) {
    if (isNotFound(err) && source.optional) return undefined;
    throw new Error(`${source.kind.toLowerCase()} ${ns}/${source.name}: ${(err as Error).message}`);
  }
}

/** Every file of a file-set volume: its path in the volume, its bytes, its mode and owner (volume-ownership.ts). */
export async function fileSetFiles(
  set: FileSetVolume,
  c: FileContext,
): Promise<Array<{ path: string; data: Buffer; access: FileAccess }>> {
  const owners = volumeOwners(c.pod);
  const out: Array<{ path: string; data: Buffer; access: FileAccess }> = [];
  for (const source of set.sources) {
    if (source.kind === "configMap" || source.kind === "secret") {
      const data = await keyedData(source, c);
      if (!data) continue;
      const items = source.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
      for (const item of items) {
        const value = data[item.key];
        if (value === undefined) {
          if (source.optional) continue;
          throw new Error(`${source.kind.toLowerCase()} ${source.name} has no key ${item.key}`);
        }
        out.push({ path: item.path, data: value, access: fileAccess(owners, item.mode ?? set.defaultMode) });
      }
    } else if (source.kind === "downwardAPI") {
      for (const item of source.items) {
        const text = item.fieldRef
          ? fieldValue(c.pod, item.fieldRef.fieldPath, { pod: [], host: [] })
          : item.resourceFieldRef
            ? resourceFieldValue(c.pod, item.resourceFieldRef, c.container)
            : "";
        out.push({
          path: item.path,
          data: Buffer.from(text),
          access: fileAccess(owners, item.mode ?? set.defaultMode),
        });
      }
    } else if (source.kind === "serviceAccountToken")
      out.push({
        path: source.path,
        data: Buffer.from(
          await requestPodToken(c.client, c.pod, source.expirationSeconds ?? 3600, source.audience),
        ),
        access: tokenAccess(owners, set.defaultMode),
      });
  }
  return out;
}

/**
 * Makes a volume plan real before the container starts: ConfigMap, Secret, downward-API and projected volumes
 * written as files (read once at start; a changed ConfigMap reaches a pod when it restarts); hostPath sources
 * created when their type asks for it, empty dirs made. Mount points are made inside the container's own root, never on the host (sandbox-command.ts).
 */
export async function prepareVolumes(plan: VolumePlan, c: FileContext): Promise<void> {
  for (const set of plan.fileSets) {
    const files = await fileSetFiles(set, c);
    // 0755 as the kubelet's: a non-root container reads its files by their own modes. The host's other users are
    // kept out by the pod's folder (0700, pod-worker.ts), which the container never passes: its mounts are binds.
    mkdirSync(set.dir, { recursive: true, mode: 0o755 });
    chmodSync(set.dir, 0o755);
    for (const f of files) {
      mkdirSync(dirname(join(set.dir, f.path)), { recursive: true });
      writeFileSync(join(set.dir, f.path), f.data, { mode: f.access.mode });
      applyAccess(join(set.dir, f.path), f.access);
    }
  }
  // 0777 as the kubelet makes an emptyDir: whoever the container runs as may write there.
  for (const dir of plan.emptyDirs) {
    mkdirSync(dir, { recursive: true });
    applyAccess(dir, emptyDirAccess(volumeOwners(c.pod)));
  }
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

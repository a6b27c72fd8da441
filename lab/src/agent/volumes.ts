import { join } from "node:path";
import type { Container, Pod, Volume } from "kubernetes-types/core/v1.js";

/**
 * A container's volume mounts, planned: where each source lives on the host and where it appears in the
 * container. The sandbox binds them in from the host's root (sandbox-command.ts), so a hostPath under /run
 * (kube-proxy's /run/xtables.lock) is the host's although the container gets a /run of its own.
 */
export interface MountPlan {
  /** Host path bound into the container. */
  source: string;
  target: string;
  readOnly: boolean;
  /** A single file rather than a folder (the mount point must be a file too). */
  file: boolean;
}

/** key → file name (and its mode); undefined means every key under its own name. */
type KeyItems = Array<{ key: string; path: string; mode?: number }> | undefined;

/** Where a file-set volume's files come from (one source for configMap, secret and downwardAPI volumes; any
 * number for a projected one). */
export type FileSource =
  | { kind: "configMap" | "secret"; name: string; items: KeyItems; optional: boolean }
  | { kind: "downwardAPI"; items: NonNullable<NonNullable<Volume["downwardAPI"]>["items"]> }
  | { kind: "serviceAccountToken"; path: string; audience?: string; expirationSeconds?: number };

/** A volume the agent writes as files before the container starts (volume-files.ts); mounted read-only. */
export interface FileSetVolume {
  dir: string;
  sources: FileSource[];
  /** The files' mode when an item does not give one (the volume's defaultMode, 0644 by default). */
  defaultMode: number;
}

/** A volume's file sources; undefined when it is not a file-set volume. */
function fileSources(v: Volume): FileSource[] | undefined {
  const keyed = (kind: "configMap" | "secret", name: string | undefined, s: KeyedSource) => ({
    kind,
    name: name ?? "",
    items: s.items?.map((i) => ({
      key: i.key,
      path: i.path,
      ...(i.mode !== undefined ? { mode: i.mode } : {}),
    })),
    optional: s.optional === true,
  });
  if (v.configMap) return [keyed("configMap", v.configMap.name, v.configMap)];
  if (v.secret) return [keyed("secret", v.secret.secretName, v.secret)];
  if (v.downwardAPI) return [{ kind: "downwardAPI", items: v.downwardAPI.items ?? [] }];
  if (v.projected)
    return (v.projected.sources ?? []).flatMap((s): FileSource[] => {
      if (s.configMap) return [keyed("configMap", s.configMap.name, s.configMap)];
      if (s.secret) return [keyed("secret", s.secret.name, s.secret)];
      if (s.downwardAPI) return [{ kind: "downwardAPI", items: s.downwardAPI.items ?? [] }];
      if (s.serviceAccountToken)
        return [
          {
            kind: "serviceAccountToken",
            path: s.serviceAccountToken.path,
            ...(s.serviceAccountToken.audience ? { audience: s.serviceAccountToken.audience } : {}),
            ...(s.serviceAccountToken.expirationSeconds
              ? { expirationSeconds: s.serviceAccountToken.expirationSeconds }
              : {}),
          },
        ];
      return [];
    });
  return undefined;
}

interface KeyedSource {
  items?: Array<{ key: string; path: string; mode?: number }>;
  optional?: boolean;
}

const defaultModeOf = (v: Volume) =>
  v.configMap?.defaultMode ??
  v.secret?.defaultMode ??
  v.downwardAPI?.defaultMode ??
  v.projected?.defaultMode ??
  0o644;

export interface HostPathVolume {
  path: string;
  /** The kubelet's hostPath types that matter here: create a file or a folder when missing. */
  create: "file" | "dir" | undefined;
  file: boolean;
}

export interface VolumePlan {
  fileSets: FileSetVolume[];
  hostPaths: HostPathVolume[];
  emptyDirs: string[];
  mounts: MountPlan[];
  /** Volumes the lab cannot provide; their mounts are skipped and the agent says so. */
  unsupported: string[];
}

/** Where ServiceAccount admission mounts the token volume; the agent writes that one itself (pod-files.ts). */
const SERVICE_ACCOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

export function planVolumes(pod: Pod, container: Container, podDir: string): VolumePlan {
  const plan: VolumePlan = { fileSets: [], hostPaths: [], emptyDirs: [], mounts: [], unsupported: [] };
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  for (const m of container.volumeMounts ?? []) {
    const v = volumes.get(m.name);
    const readOnly = m.readOnly === true;
    const dir = join(podDir, "volumes", m.name);
    const sources = v && !(v.projected && m.mountPath === SERVICE_ACCOUNT_PATH) ? fileSources(v) : undefined;
    if (v && sources) {
      if (!plan.fileSets.some((c) => c.dir === dir))
        plan.fileSets.push({ dir, sources, defaultMode: defaultModeOf(v) });
      // Read-only, as the kubelet mounts these volumes whatever the mount says.
      const source = m.subPath ? join(dir, m.subPath) : dir;
      plan.mounts.push({ source, target: m.mountPath, readOnly: true, file: m.subPath !== undefined });
    } else if (v?.hostPath) {
      const type = v.hostPath.type ?? "";
      const file = type === "File" || type === "FileOrCreate" || type === "Socket" || type === "CharDevice";
      const create = type === "FileOrCreate" ? "file" : type === "DirectoryOrCreate" ? "dir" : undefined;
      plan.hostPaths.push({ path: v.hostPath.path, create, file });
      plan.mounts.push({ source: v.hostPath.path, target: m.mountPath, readOnly, file });
    } else if (v?.projected && m.mountPath === SERVICE_ACCOUNT_PATH) {
      // ServiceAccount admission's token volume: the agent mounts the token itself (pod-files.ts).
    } else if (v?.emptyDir) {
      plan.emptyDirs.push(dir);
      plan.mounts.push({ source: dir, target: m.mountPath, readOnly, file: false });
    } else {
      plan.unsupported.push(
        v ? `${m.name} (${Object.keys(v).find((k) => k !== "name")})` : `${m.name} (undefined)`,
      );
    }
  }
  return plan;
}

import { join } from "node:path";
import type { Container, Pod } from "kubernetes-types/core/v1.js";

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

export interface ConfigMapVolume {
  name: string;
  dir: string;
  /** key → file name; undefined means every key under its own name. */
  items: Array<{ key: string; path: string }> | undefined;
  optional: boolean;
}

export interface HostPathVolume {
  path: string;
  /** The kubelet's hostPath types that matter here: create a file or a folder when missing. */
  create: "file" | "dir" | undefined;
  file: boolean;
}

export interface VolumePlan {
  configMaps: ConfigMapVolume[];
  hostPaths: HostPathVolume[];
  emptyDirs: string[];
  mounts: MountPlan[];
  /** Volumes the lab cannot provide; their mounts are skipped and the agent says so. */
  unsupported: string[];
}

export function planVolumes(pod: Pod, container: Container, podDir: string): VolumePlan {
  const plan: VolumePlan = { configMaps: [], hostPaths: [], emptyDirs: [], mounts: [], unsupported: [] };
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  for (const m of container.volumeMounts ?? []) {
    const v = volumes.get(m.name);
    const readOnly = m.readOnly === true;
    const dir = join(podDir, "volumes", m.name);
    if (v?.configMap) {
      if (!plan.configMaps.some((c) => c.dir === dir))
        plan.configMaps.push({
          name: v.configMap.name ?? "",
          dir,
          items: v.configMap.items?.map((i) => ({ key: i.key, path: i.path })),
          optional: v.configMap.optional === true,
        });
      // Read-only, as the kubelet mounts ConfigMaps whatever the mount says.
      const source = m.subPath ? join(dir, m.subPath) : dir;
      plan.mounts.push({ source, target: m.mountPath, readOnly: true, file: m.subPath !== undefined });
    } else if (v?.hostPath) {
      const type = v.hostPath.type ?? "";
      const file = type === "File" || type === "FileOrCreate" || type === "Socket" || type === "CharDevice";
      const create = type === "FileOrCreate" ? "file" : type === "DirectoryOrCreate" ? "dir" : undefined;
      plan.hostPaths.push({ path: v.hostPath.path, create, file });
      plan.mounts.push({ source: v.hostPath.path, target: m.mountPath, readOnly, file });
    } else if (v?.projected && m.mountPath === "/var/run/secrets/kubernetes.io/serviceaccount") {
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

import { dirname, join } from "node:path";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import type { Step } from "../netns/steps.js";

/**
 * A container's volume mounts, planned: where each source lives on the host and where it appears in the
 * container. The sandbox gets a private /run (sandbox-command.ts), which would hide a hostPath under /run
 * (kube-proxy's /run/xtables.lock); so hostPath sources are first bound onto a stage point in the pod's folder,
 * before the tmpfs goes on, and mounted from there.
 */
export interface MountPlan {
  /** Host path bound into the container (the stage point for hostPath volumes). */
  source: string;
  target: string;
  readOnly: boolean;
  /** A single file rather than a folder (the mount point must be a file too). */
  file: boolean;
  /** For hostPath volumes: the host path bound onto `source` before /run is replaced. */
  hostPath?: string;
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
  stage: string;
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
      const stage = join(podDir, "volumes", ".stage", m.name);
      const create = type === "FileOrCreate" ? "file" : type === "DirectoryOrCreate" ? "dir" : undefined;
      plan.hostPaths.push({ path: v.hostPath.path, create, file, stage });
      plan.mounts.push({ source: stage, target: m.mountPath, readOnly, file, hostPath: v.hostPath.path });
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

/**
 * Mount points outside /run that the host lacks (the container's root is the host's, so /etc/coredns or
 * /var/lib/kube-proxy must exist to mount onto): one mkdir per missing level, outermost first, each journaled
 * with an rmdir that leaves a folder someone filled since (-p: agents of other nodes race for the same one).
 */
export function mountPointSteps(mounts: readonly MountPlan[], exists: (path: string) => boolean): Step[] {
  const steps: Step[] = [];
  const planned = new Set<string>();
  for (const m of mounts) {
    if (underRun(m.target)) continue;
    const dir = m.file ? dirname(m.target) : m.target;
    const missing: string[] = [];
    for (let d = dir; d !== "/" && !exists(d) && !planned.has(d); d = dirname(d)) missing.unshift(d);
    for (const d of missing) {
      planned.add(d);
      steps.push({
        argv: ["mkdir", "-p", d],
        undo: { kind: "cmd", argv: ["rmdir", "--ignore-fail-on-non-empty", d] },
      });
    }
    if (m.file && !exists(m.target) && !planned.has(m.target)) {
      planned.add(m.target);
      steps.push({ argv: ["touch", m.target], undo: { kind: "cmd", argv: ["rm", "-f", m.target] } });
    }
  }
  return steps;
}

export const underRun = (path: string) =>
  path === "/run" || path.startsWith("/run/") || path.startsWith("/var/run/");

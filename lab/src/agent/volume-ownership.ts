import { chmodSync, chownSync } from "node:fs";
import type { Pod } from "kubernetes-types/core/v1.js";

/**
 * Who owns a pod's volume files, as the kubelet decides it (pkg/volume/util FsUserFrom, projected.go and
 * SetVolumeOwnership at v1.37.2): the fsUser is the one runAsUser every container of the pod runs as, if there is
 * one; the fsGroup is the pod's.
 */
export interface VolumeOwners {
  fsUser?: number;
  fsGroup?: number;
}

export function volumeOwners(pod: Pod): VolumeOwners {
  const spec = pod.spec;
  const podUser = spec?.securityContext?.runAsUser;
  const users = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map(
    (c) => c.securityContext?.runAsUser ?? podUser,
  );
  const [first] = users;
  const fsUser = first !== undefined && users.every((u) => u === first) ? first : undefined;
  const fsGroup = spec?.securityContext?.fsGroup;
  return { ...(fsUser === undefined ? {} : { fsUser }), ...(fsGroup === undefined ? {} : { fsGroup }) };
}

/** A file's mode and owner; undefined ids stay root's. */
export interface FileAccess {
  mode: number;
  uid?: number;
  gid?: number;
}

/**
 * A ServiceAccount token's: the volume's mode, but 0600 for the fsUser when there is an fsUser or an fsGroup,
 * and then readable by the fsGroup (0640), as the ownership change the kubelet makes for fsGroup gives.
 */
export function tokenAccess(owners: VolumeOwners, defaultMode: number): FileAccess {
  if (owners.fsUser === undefined && owners.fsGroup === undefined) return { mode: defaultMode };
  return {
    mode: owners.fsGroup === undefined ? 0o600 : 0o640,
    ...(owners.fsUser === undefined ? {} : { uid: owners.fsUser }),
    ...(owners.fsGroup === undefined ? {} : { gid: owners.fsGroup }),
  };
}

/** Any other volume file's: its mode, and with an fsGroup that group's and readable by it (SetVolumeOwnership). */
export function fileAccess(owners: VolumeOwners, mode: number): FileAccess {
  if (owners.fsGroup === undefined) return { mode };
  return { mode: mode | 0o440, gid: owners.fsGroup };
}

/** An emptyDir's folder: 0777, and with an fsGroup that group's with the setgid bit, so new files are its too. */
export function emptyDirAccess(owners: VolumeOwners): FileAccess {
  return owners.fsGroup === undefined ? { mode: 0o777 } : { mode: 0o2777, gid: owners.fsGroup };
}

/** Gives `path` its access (chown before chmod: a chown clears the setgid bit). */
export function applyAccess(path: string, access: FileAccess): void {
  if (access.uid !== undefined || access.gid !== undefined) chownSync(path, access.uid ?? 0, access.gid ?? 0);
  chmodSync(path, access.mode);
}

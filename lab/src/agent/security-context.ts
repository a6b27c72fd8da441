import type { Container, Pod } from "kubernetes-types/core/v1.js";

/**
 * Who a container's process is and what it may do, from the pod's and the container's securityContext, as the
 * kubelet passes them to the runtime and containerd 2 applies them: the user and groups, the capabilities, no
 * new privileges, a read-only root.
 */
export interface ProcessIdentity {
  uid: number;
  gid: number;
  /** Supplementary groups: the pod's supplementalGroups and fsGroup. */
  groups: number[];
  /** The bounding set, lower-case names without `cap_`; every capability for a privileged container. */
  capabilities: string[] | "all";
  /** allowPrivilegeEscalation false: setuid programs and file capabilities grant nothing. */
  noNewPrivs: boolean;
  readOnlyRoot: boolean;
}

/** containerd's default capabilities (pkg/oci defaultUnixCaps, v2.3.7): what a container has unless told. */
export const defaultCapabilities = [
  "chown",
  "dac_override",
  "fsetid",
  "fowner",
  "mknod",
  "net_raw",
  "setgid",
  "setuid",
  "setfcap",
  "setpcap",
  "net_bind_service",
  "sys_chroot",
  "kill",
  "audit_write",
];

/** A capability as the API may spell it (NET_ADMIN, CAP_NET_ADMIN) in setpriv's spelling (net_admin). */
const capName = (name: string) => name.toLowerCase().replace(/^cap_/, "");

/**
 * The container's identity, or the kubelet's error (CreateContainerConfigError) when runAsNonRoot cannot hold.
 * The images here carry no user of their own, so a container without runAsUser runs as root (uid 0).
 * `passwdGid`: the primary group of a uid in the image's /etc/passwd, used when runAsGroup is not given.
 */
export function processIdentity(
  pod: Pod,
  container: Pick<Container, "name" | "securityContext">,
  passwdGid: (uid: number) => number | undefined,
): ProcessIdentity | { error: string } {
  const podSc = pod.spec?.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  const runAsNonRoot = sc.runAsNonRoot ?? podSc.runAsNonRoot;
  const podDesc = `"${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})"`;
  if (runAsNonRoot && runAsUser === 0)
    return {
      error: `container's runAsUser breaks non-root policy (pod: ${podDesc}, container: ${container.name})`,
    };
  if (runAsNonRoot && runAsUser === undefined)
    return {
      error: `container has runAsNonRoot and image will run as root (pod: ${podDesc}, container: ${container.name})`,
    };
  const uid = runAsUser ?? 0;
  const gid = sc.runAsGroup ?? podSc.runAsGroup ?? passwdGid(uid) ?? 0;
  const groups = [
    ...new Set([
      ...(podSc.supplementalGroups ?? []),
      ...(podSc.fsGroup === undefined ? [] : [podSc.fsGroup]),
    ]),
  ];
  const privileged = sc.privileged === true;
  const drop = new Set((sc.capabilities?.drop ?? []).map(capName));
  const add = (sc.capabilities?.add ?? []).map(capName);
  const base = drop.has("all") ? [] : defaultCapabilities.filter((c) => !drop.has(c));
  const capabilities = privileged || add.includes("all") ? "all" : [...new Set([...base, ...add])];
  return {
    uid,
    gid,
    groups,
    capabilities,
    noNewPrivs: !privileged && sc.allowPrivilegeEscalation === false,
    readOnlyRoot: sc.readOnlyRootFilesystem === true,
  };
}

/**
 * The setpriv(1) command that execs the container's program as `id`: the bounding set cut to its capabilities
 * (a root process keeps those; a process that changes to another uid keeps none, as under containerd, so a
 * non-root program gets a capability only from a file capability), no inheritable ones, the user and groups.
 */
export function setprivArgv(id: ProcessIdentity): string[] {
  const caps =
    id.capabilities === "all" ? [] : [`--bounding-set=-all${id.capabilities.map((c) => `,+${c}`).join("")}`];
  const user =
    id.uid === 0 && id.gid === 0 && id.groups.length === 0
      ? []
      : [
          `--reuid=${id.uid}`,
          `--regid=${id.gid}`,
          id.groups.length ? `--groups=${id.groups.join(",")}` : "--clear-groups",
        ];
  return ["setpriv", ...caps, "--inh-caps=-all", ...user, ...(id.noNewPrivs ? ["--no-new-privs"] : []), "--"];
}

/** The primary group of `uid` in passwd(5) text; undefined when no line has it. */
export function passwdGroupOf(passwd: string, uid: number): number | undefined {
  for (const line of passwd.split("\n")) {
    const fields = line.split(":");
    if (fields.length >= 4 && Number(fields[2]) === uid && fields[2] !== "") return Number(fields[3]);
  }
  return undefined;
}

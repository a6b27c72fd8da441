import { dirname } from "node:path";
import { type MountPlan, underRun } from "./volumes.js";

/** Where and how a container's process is started. */
export interface SandboxCommand {
  /** The network namespace: the pod's, or the node's for hostNetwork pods. */
  netns: string;
  hostname: string;
  resolvConf: string;
  /** The service-account folder, or undefined when the token is not mounted. */
  serviceAccountDir: string | undefined;
  argv: readonly string[];
  /** Volume mounts (volumes.ts), made after the pod's own files. */
  mounts?: readonly MountPlan[];
}

const secretsDir = "/run/secrets/kubernetes.io/serviceaccount";

/**
 * The command line that enters the network namespace, takes a private mount and UTS namespace, and there mounts
 * the pod's files before exec'ing the container's process (so the pid we spawn is the container's). /run gets a
 * fresh tmpfs, as in a container, which gives the secrets folder somewhere to live without touching the host.
 * Paths of volumes are quoted into the script; the pod's own files come in as positional parameters.
 */
export function sandboxArgv(c: SandboxCommand): string[] {
  const mounts = c.mounts ?? [];
  const script = [
    'hostname "$1"',
    ...mounts.filter((m) => m.hostPath).map((m) => `mount --bind ${q(m.hostPath ?? "")} ${q(m.source)}`),
    "mount -t tmpfs -o mode=0755,size=4m sy-run /run",
    'mount --bind "$2" /etc/resolv.conf',
    ...(c.serviceAccountDir ? [`mkdir -p ${secretsDir}`, `mount --bind -o ro "$3" ${secretsDir}`] : []),
    ...mounts.flatMap(mountIn),
    "shift 3",
    'exec "$@"',
  ].join(" && ");
  return [
    "ip",
    "netns",
    "exec",
    c.netns,
    "unshare",
    "--mount",
    "--uts",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    script,
    "sandbox",
    c.hostname,
    c.resolvConf,
    c.serviceAccountDir ?? "-",
    ...c.argv,
  ];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Inside the fresh /run a mount point has to be made first; elsewhere the agent made it (mountPointSteps). */
function mountIn(m: MountPlan): string[] {
  const make = !underRun(m.target)
    ? []
    : m.file
      ? [`mkdir -p ${q(dirname(m.target))}`, `touch ${q(m.target)}`]
      : [`mkdir -p ${q(m.target)}`];
  return [...make, `mount --bind${m.readOnly ? " -o ro" : ""} ${q(m.source)} ${q(m.target)}`];
}

/** Where and how a container's process is started. */
export interface SandboxCommand {
  /** The network namespace: the pod's, or the node's for hostNetwork pods. */
  netns: string;
  hostname: string;
  resolvConf: string;
  /** The service-account folder, or undefined when the token is not mounted. */
  serviceAccountDir: string | undefined;
  argv: readonly string[];
}

const secretsDir = "/run/secrets/kubernetes.io/serviceaccount";

/**
 * The command line that enters the network namespace, takes a private mount and UTS namespace, and there mounts
 * the pod's files before exec'ing the container's process (so the pid we spawn is the container's). /run gets a
 * fresh tmpfs, as in a container, which gives the secrets folder somewhere to live without touching the host.
 */
export function sandboxArgv(c: SandboxCommand): string[] {
  const script = [
    'hostname "$1"',
    "mount -t tmpfs -o mode=0755,size=4m sy-run /run",
    'mount --bind "$2" /etc/resolv.conf',
    ...(c.serviceAccountDir ? [`mkdir -p ${secretsDir}`, `mount --bind -o ro "$3" ${secretsDir}`] : []),
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

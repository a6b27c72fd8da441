import { dirname } from "node:path";
import { containerPathDirs } from "./container-path.js";
import type { MountPlan } from "./volumes.js";

/** Where and how a container's process is started. */
export interface SandboxCommand {
  /** The network namespace: the pod's, or the node's for hostNetwork pods. */
  netns: string;
  hostname: string;
  /**
   * A folder of the pod's for this container: inside the sandbox a tmpfs there holds the root's writable layer,
   * so nothing the container writes reaches the host's files and a restart starts from the image again.
   */
  rootDir: string;
  /** The image's files (image-layer.ts), copied into the writable layer over the host's; undefined: none. */
  layerDir?: string;
  /** The host's top-level mounts (host-mounts.ts), bound into the root so it shows what the host's shows. */
  hostMounts: readonly string[];
  /** The pod's own files, bound over the root's. */
  etc: { resolvConf: string; hosts: string; hostname: string };
  /** The service-account folder, or undefined when the token is not mounted. */
  serviceAccountDir: string | undefined;
  /** The container's workingDir; the image's (/) when undefined. */
  workingDir?: string;
  argv: readonly string[];
  /** Volume mounts (volumes.ts), made after the pod's own files. */
  mounts?: readonly MountPlan[];
  /**
   * The container's cgroups' cgroup.procs files (pod-cgroups.ts), joined last before the process starts: what the
   * sandbox's set-up writes (the image's files on the tmpfs) is not charged to the container's memory limit.
   */
  cgroupProcs?: readonly string[];
  /**
   * Who the process is (container-identity.ts): the setpriv(1) argv it is exec'd through, ending in `--`, the
   * host's mount(8) when the root is mounted read-only (both by the host's paths, which the root shows: an image's
   * own, busybox's, takes other options), and the host's folders on the way to its programs that a non-root
   * process could not pass (the project's node under /root, 0700), made passable in the container's layer only.
   */
  identity?: { setpriv: readonly string[]; readOnlyMount: string | undefined; passDirs: readonly string[] };
}

const secretsDir = "/run/secrets/kubernetes.io/serviceaccount";
/** The host's root while the container's is put together; gone before the container's process starts. */
const oldRoot = "/.sy-host";

/**
 * The command line that enters the network namespace, takes a private mount and UTS namespace, builds the
 * container's root and execs the container's process there (so the pid we spawn is the container's), as a
 * runtime does with an image: an overlay whose lower layer is the host's root filesystem and whose upper layer,
 * on a tmpfs, starts as the image's files; the host's other mounts bound in, but a sysfs of the pod's network
 * namespace on /sys, as `ip netns exec` or a runtime gives; then pivot_root. The namespace is entered with
 * nsenter, not `ip netns exec`, whose own fresh /sys would hide the host's BPF file system and cgroup2 mount
 * from hostPath volumes (kube-proxy's in ebpf mode binds both). Inside the new root,
 * with the host's reachable under /.sy-host until the end, it mounts a fresh /run, the pod's /etc files, the
 * service-account token and the volumes, paths resolved inside the container's root as a runtime resolves them
 * (a symbolic link in a mount path points into the container, not the host). Then the host's root is let go, and
 * `exec` fails as runc does when the program is not in the root.
 */
export function sandboxArgv(c: SandboxCommand): string[] {
  const r = c.rootDir;
  const host = (path: string) => q(`${oldRoot}${path}`);
  const build = [
    "set -e",
    `P=$PATH; PATH=${containerPathDirs.join(":")}`,
    `hostname ${q(c.hostname)}`,
    `mount -t tmpfs -o mode=0755 sy-layer ${q(r)}`,
    `mkdir ${q(`${r}/upper`)} ${q(`${r}/work`)} ${q(`${r}/root`)}`,
    ...(c.layerDir ? [`cp -a ${q(`${c.layerDir}/.`)} ${q(`${r}/upper/`)}`] : []),
    `mount -t overlay sy-root -o ${q(`lowerdir=/,upperdir=${r}/upper,workdir=${r}/work`)} ${q(`${r}/root`)}`,
    // Unbindable (once the overlay holds its own copy of the upper path), so binding a host mount that holds this
    // folder into the root does not copy the root into itself.
    `mount --make-unbindable ${q(r)}`,
    ...c.hostMounts.filter((m) => m !== "/sys").map((m) => `mount --rbind ${q(m)} ${q(`${r}/root${m}`)}`),
    `mount -t sysfs sysfs ${q(`${r}/root/sys`)}`,
    `cd ${q(`${r}/root`)}`,
    `mkdir ${q(oldRoot.slice(1))}`,
    `pivot_root . ${q(oldRoot.slice(1))}`,
    "cd /",
    `PATH=${containerPathDirs.map((d) => `${oldRoot}${d}`).join(":")}`,
  ];
  // A file mount point: a link there (a host's /etc/resolv.conf into /run) is replaced, a missing one made.
  const fileAt = (t: string) =>
    `if [ -L ${q(t)} ]; then rm ${q(t)}; fi; if [ ! -e ${q(t)} ]; then mkdir -p ${q(dirname(t))}; : >${q(t)}; fi`;
  const bind = (source: string, target: string, readOnly: boolean) =>
    `mount --bind${readOnly ? " -o ro" : ""} ${host(source)} ${q(target)}`;
  const mounts = [
    "mount -t tmpfs -o mode=0755,size=4m sy-run /run",
    ...(["resolvConf", "hosts", "hostname"] as const).flatMap((f) => {
      const target = `/etc/${f === "resolvConf" ? "resolv.conf" : f}`;
      return [fileAt(target), bind(c.etc[f], target, false)];
    }),
    ...(c.serviceAccountDir ? [`mkdir -p ${secretsDir}`, bind(c.serviceAccountDir, secretsDir, true)] : []),
    ...(c.mounts ?? []).flatMap((m) => [
      m.file ? fileAt(m.target) : `mkdir -p ${q(m.target)}`,
      bind(m.source, m.target, m.readOnly),
    ]),
  ];
  const workingDir = c.workingDir || "/";
  const id = c.identity;
  const start = [
    `mkdir -p ${q(workingDir)}`,
    ...(id?.passDirs ?? []).map((d) => `chmod o+x ${q(d)}`),
    ...(c.cgroupProcs ?? []).map((procs) => `echo $$ >${host(procs)}`),
    `umount -l ${oldRoot}`,
    // The root's own copies of the host's programs (its lower layer is the host's root) until the container's PATH.
    `PATH=${containerPathDirs.join(":")}`,
    `rmdir ${oldRoot}`,
    // As runc makes a read-only root: this mount only; /run, the pod's files and the volumes keep their own modes.
    ...(id?.readOnlyMount ? [`${q(id.readOnlyMount)} -o remount,bind,ro /`] : []),
    "PATH=$P",
    `cd ${q(workingDir)}`,
    // runc's words and exit code for a program the root does not have.
    `command -v "$1" >/dev/null || { echo "exec: \\"$1\\": executable file not found in \\$PATH" >&2; exit 128; }`,
    id ? `exec ${id.setpriv.map(q).join(" ")} "$@"` : 'exec "$@"',
  ];
  const script = [...build, ...mounts, ...start].join("\n");
  return [
    "nsenter",
    `--net=/run/netns/${c.netns}`,
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
    ...c.argv,
  ];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

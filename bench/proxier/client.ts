// Where the bench's clients run: the client network namespace, whose traffic crosses the node namespace to the
// pods. For ebpf mode the client also joins the proxy's cgroup first: its programs balance the sockets of that
// cgroup's processes when they connect, and nothing else. Joining before `ip netns exec` matters, since that
// command mounts a private /sys where the cgroup's path is not found.
import { execFileSync } from "node:child_process";
import { type Net, NODE_IP, CLUSTER_CIDR as POD_NETWORK, sh } from "@switchyard/kube-proxy-app/testing";

/** What a client needs to know of the proxy under test. */
export interface ClientPlace {
  readonly net: Net;
  /** ebpf mode: the cgroup2 directory the proxy's programs are attached to. */
  readonly cgroup?: string;
}

/** `sh -c JOIN_CGROUP <dir> command...`: moves the shell into the cgroup, then becomes the command. */
const JOIN_CGROUP = 'echo $$ > "$0/cgroup.procs" && exec "$@"';

/** The command line that runs `argv` as a client of `p`. */
export function clientArgv(p: ClientPlace, argv: readonly string[]): string[] {
  const inNs = ["ip", "netns", "exec", p.net.client, ...argv];
  return p.cgroup === undefined ? inNs : ["sh", "-c", JOIN_CGROUP, p.cgroup, ...inNs];
}

/** Runs `argv` as a client to its end, killed after `timeoutMs`; its standard output. */
export function inClient(p: ClientPlace, argv: readonly string[], timeoutMs = 120_000): string {
  const [command = "", ...args] = clientArgv(p, argv);
  return execFileSync(command, args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: timeoutMs,
    killSignal: "SIGKILL",
  });
}

/**
 * The client reaches the pods' addresses through the node: ebpf mode turns a ClusterIP into one of them before
 * the first packet leaves, and the pod-IP ceilings of the connection and packet measurements go there directly.
 * The netfilter modes never need it (their packets leave for the ClusterIP); it changes nothing for them.
 */
export function routeClientToPods(net: Net): void {
  sh(["ip", "-n", net.client, "route", "add", POD_NETWORK, "via", NODE_IP]);
}

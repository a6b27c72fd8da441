import { down, status, up } from "../controlplane/controlplane.js";
import { defaultStateDir } from "../controlplane/options.js";
import { resolveBinary } from "../upstream/binaries.js";
import { parseFlags, portFlag, UsageError } from "./usage.js";

const help = `switchyard-lab controlplane up|down|status

up flags:
  --state-dir DIR              where certificates, kubeconfigs, etcd data and logs go (default ${defaultStateDir()})
  --no-controller-manager      start without kube-controller-manager
  --no-scheduler               start without kube-scheduler
  --bind-address IP            where every component listens (default 127.0.0.1)
  --advertise-address IP       the address in the kubernetes Service (default: the bind address)
  --apiserver-port N           default 6443
  --etcd-port N                default 2379
  --etcd-peer-port N           default 2380
  --controller-manager-port N  default 10257
  --scheduler-port N           default 10259
  --service-cidr CIDR          default 10.96.0.0/16
  --cluster-cidr CIDR          default 10.244.0.0/16
  --timeout SECONDS            how long to wait for /readyz (default 120)
down flags:
  --state-dir DIR
  --keep                       keep the state folder (etcd data, certificates, logs)
status flags:
  --state-dir DIR`;

export async function controlplaneCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const cmd = `controlplane ${sub ?? ""}`.trim();
  if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(help);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "up") {
    const { values } = parseFlags(cmd, rest, {
      "state-dir": { type: "string" },
      "no-controller-manager": { type: "boolean" },
      "no-scheduler": { type: "boolean" },
      "bind-address": { type: "string" },
      "advertise-address": { type: "string" },
      "apiserver-port": { type: "string" },
      "etcd-port": { type: "string" },
      "etcd-peer-port": { type: "string" },
      "controller-manager-port": { type: "string" },
      "scheduler-port": { type: "string" },
      "service-cidr": { type: "string" },
      "cluster-cidr": { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean" },
    });
    if (values.help) {
      console.log(help);
      return 0;
    }
    const ports = Object.fromEntries(
      Object.entries({
        apiserver: portFlag(cmd, "apiserver-port", values["apiserver-port"]),
        etcdClient: portFlag(cmd, "etcd-port", values["etcd-port"]),
        etcdPeer: portFlag(cmd, "etcd-peer-port", values["etcd-peer-port"]),
        controllerManager: portFlag(cmd, "controller-manager-port", values["controller-manager-port"]),
        scheduler: portFlag(cmd, "scheduler-port", values["scheduler-port"]),
      }).filter(([, v]) => v !== undefined),
    );
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeout !== undefined && !(timeout > 0))
      throw new UsageError(`${cmd}: --timeout must be a number of seconds, got "${values.timeout}"`);
    const state = await up({
      ...(values["state-dir"] ? { stateDir: values["state-dir"] } : {}),
      ...(values["bind-address"] ? { bindAddress: values["bind-address"] } : {}),
      ...(values["advertise-address"] ? { advertiseAddress: values["advertise-address"] } : {}),
      ...(values["service-cidr"] ? { serviceCidr: values["service-cidr"] } : {}),
      ...(values["cluster-cidr"] ? { clusterCidr: values["cluster-cidr"] } : {}),
      ...(timeout ? { readyTimeoutMs: timeout * 1000 } : {}),
      ports,
      controllerManager: !values["no-controller-manager"],
      scheduler: !values["no-scheduler"],
    });
    const kubectl = resolveBinary("kubectl").path;
    console.log(`control plane ready in ${state.startSeconds.toFixed(1)}s at ${state.server}`);
    console.log(`kubeconfig: ${state.kubeconfig}`);
    console.log(
      kubectl ? `kubectl:    ${kubectl}` : "kubectl:    not found (npx switchyard-lab upstream build)",
    );
    console.log(`try:        ${kubectl ?? "kubectl"} --kubeconfig ${state.kubeconfig} get --raw /readyz`);
    console.log(
      '            eval "$(npx switchyard-lab env)"   # kubectl on PATH and KUBECONFIG set in this shell',
    );
    return 0;
  }
  if (sub === "down") {
    const { values } = parseFlags(cmd, rest, { "state-dir": { type: "string" }, keep: { type: "boolean" } });
    const dir = values["state-dir"] ?? defaultStateDir();
    const result = await down(dir, values.keep ?? false);
    if (result.stopped.length === 0) console.log(`nothing was running from ${dir}`);
    for (const s of result.stopped) console.log(`${s.name}: ${s.result}`);
    console.log(result.removed ? `removed ${dir}` : `kept ${dir}`);
    return 0;
  }
  if (sub === "status") {
    const { values } = parseFlags(cmd, rest, { "state-dir": { type: "string" } });
    const dir = values["state-dir"] ?? defaultStateDir();
    const { state, components } = await status(dir);
    if (!state) {
      console.log(`no control plane in ${dir}`);
      return 1;
    }
    console.log(`server:     ${state.server}\nkubeconfig: ${state.kubeconfig}`);
    for (const c of components) {
      console.log(
        `${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? "running" : "stopped"}  ${c.health}`,
      );
    }
    return components.every((c) => c.running) ? 0 : 1;
  }
  throw new UsageError(`unknown subcommand "controlplane ${sub}"; expected up, down or status`);
}

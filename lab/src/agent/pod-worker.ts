import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ApiError,
  formatTime,
  type HttpRestClient,
  isConflict,
  isNotFound,
  type Logger,
  patchContentTypes,
} from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { Exec } from "../exec.js";
import { Container, type RestartPolicy } from "./container.js";
import { onPty } from "./container-input.js";
import { ContainerLog } from "./container-log.js";
import { execInContainerFor } from "./exec-hook.js";
import {
  applySteps,
  type Journal,
  type LabPlan,
  type NodePlan,
  podSandboxSteps,
  realTeardownDeps,
  teardown,
} from "./host/netns.js";
import { hostTopLevelMounts } from "./host-mounts.js";
import { hostPortCommands, hostPortMappings } from "./host-ports.js";
import { ensureLayer } from "./image-layer.js";
import { type ImageContext, resolveImage } from "./images.js";
import type { Ipam } from "./ipam.js";
import type { ContainerHandle } from "./kubelet-api/container-logs.js";
import { containerEnv, etcHosts, podHostname, resolvConf, writeServiceAccount } from "./pod-files.js";
import { podStatus } from "./pod-status.js";
import { probeOnce, Readiness } from "./probes.js";
import { sandboxArgv } from "./sandbox-command.js";
import { prepareVolumes } from "./volume-files.js";
import { planVolumes } from "./volumes.js";

export interface WorkerDeps {
  client: HttpRestClient;
  plan: LabPlan;
  node: NodePlan;
  /** One per family of the node's pod CIDRs, the primary first. */
  ipams: Ipam[];
  exec: Exec;
  journal: Journal;
  podsDir: string;
  caFile: string;
  hostResolv: string;
  /** The node's /etc/hosts, which hostNetwork pods get under the kubelet's header. */
  hostHosts: string;
  images: ImageContext;
  /** Where image layers are made (image-layer.ts), shared by the lab's agents. */
  layersDir: string;
  log: Logger;
}

/** The apiserver refused a patch whose uid is not the object's: this pod is gone, a namesake took its name. */
const replacedByNamesake = (err: unknown) =>
  err instanceof ApiError && err.code === 422 && err.message.includes("metadata.uid");

type PodContainer = NonNullable<Pod["spec"]>["containers"][number];

/** What every container of a pod shares: the pod's folder, its /etc files, its token, the host's mounts. */
interface SandboxShared {
  netns: string;
  dir: string;
  etc: { files: { resolvConf: string; hosts: string; hostname: string }; hostname: string };
  saDir: string | undefined;
  hostMounts: string[];
}

/** The pod network namespace's name; it carries the node's index so a restarted agent finds its leftovers. */
export const podNetnsPrefix = (plan: LabPlan, node: NodePlan) => `${plan.prefix}-pod-n${node.index}-`;

/** One pod on this node, from sandbox to deletion: what a kubelet's pod worker does. */
export class PodWorker {
  private containers: Array<{
    c: Container;
    readiness: Readiness | undefined;
    name: string;
    image: string;
    log: ContainerLog;
  }> = [];
  /** One per family, the primary first; empty before start(). */
  private podIps: string[] = [];
  private netns: string | undefined;
  private timers: NodeJS.Timeout[] = [];
  private lastSent = "";
  private sending: Promise<void> = Promise.resolve();
  /** The deletion was seen: containers are being stopped. Probes and status posts go on meanwhile, as the
   * kubelet's do, so a container that stops being ready while it drains shows as not serving in its slice. */
  private terminating = false;
  /** Every container has stopped: nothing more is probed or posted. */
  private stopped = false;
  private readonly startTime = formatTime(Date.now());
  /** start() has made every container: status posts describe them all. */
  private started = false;
  /** The pod's hostPorts are in the node's maps (taken out when it terminates). */
  private hostPortsAdded = false;

  constructor(
    private pod: Pod,
    private readonly d: WorkerDeps,
  ) {}

  /** The primary family's address: what probes dial and status.podIP says. */
  private get podIp(): string | undefined {
    return this.podIps[0];
  }

  private get key(): string {
    return `${this.pod.metadata?.namespace}/${this.pod.metadata?.name}`;
  }

  update(pod: Pod): void {
    this.pod = pod;
    // A readiness gate's condition is set by someone else: Ready follows it, as the kubelet's status sync does.
    if (this.started && pod.spec?.readinessGates?.length) this.sendStatus();
  }

  /** The pod as last seen from the API (the kubelet API's /pods lists these). */
  get object(): Pod {
    return this.pod;
  }

  /** The network namespace the pod's containers run in (the node's for hostNetwork); undefined before start(). */
  get podNetns(): string | undefined {
    return this.netns;
  }

  /** A container's state, log and process for the kubelet API; undefined until start() has made it. */
  container(name: string): ContainerHandle | undefined {
    const e = this.containers.find((entry) => entry.name === name);
    if (!e) return undefined;
    const view = { state: e.c.state, lastState: e.c.lastState, current: e.log.current };
    return { view, log: e.log, pid: e.c.pid, input: e.c.input };
  }

  async start(): Promise<void> {
    const spec = this.pod.spec;
    if (!spec) return;
    const runnables = spec.containers.map((c) => ({ container: c, run: resolveImage(c, this.d.images) }));
    const unknown = runnables.find((r) => r.run.kind === "unknown");
    if (unknown && unknown.run.kind === "unknown") {
      this.failImages(unknown.run.message);
      return;
    }
    const hostNetwork = spec.hostNetwork === true;
    const uid = this.pod.metadata?.uid ?? "";
    const dir = join(
      this.d.podsDir,
      `${this.pod.metadata?.namespace}_${this.pod.metadata?.name}_${uid.slice(0, 8)}`,
    );
    mkdirSync(dir, { recursive: true });
    if (hostNetwork) {
      this.podIps = this.d.node.ips;
      this.netns = this.d.node.netns;
    } else {
      this.podIps = this.d.ipams.map((ipam) => ipam.allocate());
      this.netns = `${podNetnsPrefix(this.d.plan, this.d.node)}${uid.slice(0, 8)}`;
      const steps = podSandboxSteps({
        node: this.d.node,
        netns: this.netns,
        hostVeth: `veth${uid.slice(0, 8)}`,
        addresses: this.d.ipams.map((ipam, i) => ({
          ip: this.podIps[i] ?? "",
          prefixLength: ipam.prefixLength,
          gateway: ipam.gateway,
        })),
      });
      await applySteps(steps, this.d.exec, this.d.journal);
    }
    const etc = this.writeEtcFiles(dir, hostNetwork);
    await this.addHostPorts();
    let saDir: string | undefined;
    if (spec.automountServiceAccountToken !== false) {
      saDir = join(dir, "serviceaccount");
      const lifetime = await writeServiceAccount(this.d.client, this.pod, saDir, this.d.caFile);
      // Refreshed at 80% of its life, as the kubelet does.
      const refresh = setInterval(() => {
        if (saDir) void writeServiceAccount(this.d.client, this.pod, saDir, this.d.caFile).catch(() => {});
      }, lifetime * 800);
      this.timers.push(refresh);
    }
    const shared = { netns: this.netns, dir, etc, saDir, hostMounts: hostTopLevelMounts() };
    for (const { container } of runnables) await this.startContainer(container, shared);
    this.started = true;
    this.sendStatus();
  }

  /** An image of the pod cannot run here: every container waits in ErrImagePull with the reason, none starts. */
  private failImages(message: string): void {
    const spec = this.pod.spec;
    this.d.log.warn("image not known", { pod: this.key, message });
    this.containers = (spec?.containers ?? []).map((c) => {
      const output = { stdout: "", stderr: "" };
      const container = new Container({
        name: c.name,
        argv: undefined,
        env: {},
        output,
        restartPolicy: "Never",
        onChange: () => {},
      });
      container.state = { waiting: { reason: "ErrImagePull", message } };
      // Never started, so its log stays empty; the paths are never written.
      const log = new ContainerLog(output, "", "");
      return { c: container, readiness: undefined, name: c.name, image: c.image ?? "", log };
    });
    this.sendStatus(false);
  }

  /** One container of the pod: its volumes, its root and process (sandbox-command.ts), its log, its probes. */
  private async startContainer(container: PodContainer, s: SandboxShared): Promise<void> {
    const env = containerEnv(
      this.pod,
      container.env ?? [],
      { pod: this.podIps, host: this.d.node.ips },
      this.d.plan,
    );
    const run = resolveImage(container, this.d.images, env);
    const volumes = planVolumes(this.pod, container, s.dir);
    let configError: string | undefined;
    try {
      await prepareVolumes(volumes, this.pod.metadata?.namespace ?? "default", this.d);
    } catch (err) {
      configError = (err as Error).message;
    }
    for (const v of volumes.unsupported) this.d.log.warn("volume not mounted", { pod: this.key, volume: v });
    const rootDir = join(s.dir, "rootfs", container.name);
    mkdirSync(rootDir, { recursive: true });
    const argv =
      run.kind === "process"
        ? sandboxArgv({
            netns: s.netns,
            hostname: s.etc.hostname,
            rootDir,
            layerDir: run.layer && ensureLayer(this.d.layersDir, run.layer),
            hostMounts: s.hostMounts,
            etc: s.etc.files,
            serviceAccountDir: s.saDir,
            ...(container.workingDir ? { workingDir: container.workingDir } : {}),
            argv: container.tty ? onPty(run.argv) : run.argv,
            mounts: volumes.mounts,
          })
        : undefined;
    // Each output in its own file, both copied into <name>.log; instance logs in a folder per container, as the
    // kubelet keeps /var/log/pods/<pod>/<container>/.
    const output = {
      stdout: join(s.dir, `${container.name}.stdout`),
      stderr: join(s.dir, `${container.name}.stderr`),
    };
    const log = new ContainerLog(
      output,
      join(s.dir, `${container.name}.log`),
      join(s.dir, "logs", container.name),
    );
    const c = new Container({
      name: container.name,
      argv,
      env,
      output,
      log,
      restartPolicy: (this.pod.spec?.restartPolicy ?? "Always") as RestartPolicy,
      input: {
        stdin: container.stdin === true,
        stdinOnce: container.stdinOnce === true,
        tty: container.tty === true,
      },
      onChange: () => this.sendStatus(),
    });
    const probe = container.readinessProbe;
    const entry = {
      c,
      readiness: probe ? new Readiness(probe) : undefined,
      name: container.name,
      image: container.image ?? "",
      log,
    };
    this.containers.push(entry);
    if (configError) {
      this.d.log.warn("container not started", { pod: this.key, error: configError });
      c.state = { waiting: { reason: "CreateContainerConfigError", message: configError } };
      return;
    }
    c.start();
    if (probe && entry.readiness) this.startProbing(container, entry.readiness, c);
  }

  /**
   * The pod's resolv.conf, /etc/hosts and /etc/hostname, written as the kubelet writes them; its hostname (the
   * node's on the host network).
   */
  private writeEtcFiles(dir: string, hostNetwork: boolean) {
    const files = {
      resolvConf: join(dir, "resolv.conf"),
      hosts: join(dir, "hosts"),
      hostname: join(dir, "hostname"),
    };
    const hostname = hostNetwork ? this.d.node.name : podHostname(this.pod).hostname;
    writeFileSync(files.resolvConf, resolvConf(this.pod, this.d.plan, this.d.hostResolv));
    writeFileSync(files.hosts, etcHosts(this.pod, this.podIps, this.d.hostHosts), { mode: 0o644 });
    writeFileSync(files.hostname, `${hostname}\n`);
    return { files, hostname };
  }

  /** The pod's hostPorts into the node's DNAT maps (host-ports.ts), with UDP flows to those ports forgotten. */
  private async addHostPorts(): Promise<void> {
    const mappings = hostPortMappings(this.pod, this.podIp);
    if (mappings.length === 0) return;
    const inNode = (...argv: string[]) => this.d.exec(["ip", "netns", "exec", this.d.node.netns, ...argv]);
    try {
      await inNode("nft", hostPortCommands(mappings).add.join("; "));
      this.hostPortsAdded = true;
    } catch (err) {
      this.d.log.warn("hostPort not set up", { pod: this.key, error: (err as Error).message });
    }
    // As portmap does: an old UDP flow to the port would keep going where it went before.
    for (const m of mappings.filter((x) => x.protocol === "udp"))
      await inNode("conntrack", "-D", "-p", "udp", "--dport", String(m.hostPort)).catch(() => {});
  }

  private async removeHostPorts(): Promise<void> {
    if (!this.hostPortsAdded) return;
    this.hostPortsAdded = false;
    const { remove } = hostPortCommands(hostPortMappings(this.pod, this.podIp));
    await this.d
      .exec(["ip", "netns", "exec", this.d.node.netns, "nft", remove.join("; ")])
      .catch((err: Error) => this.d.log.warn("hostPort not removed", { pod: this.key, error: err.message }));
  }

  private startProbing(container: PodContainer, readiness: Readiness, c: Container) {
    const probe = container.readinessProbe ?? {};
    const run = async () => {
      if (this.stopped || !this.podIp) return;
      const result = c.running ? await probeOnce(probe, this.podIp, container, c.pid) : "failure";
      if (result === "unsupported")
        this.d.log.warn("probe type not supported, counted as passing", { pod: this.key });
      if (readiness.record(result)) this.sendStatus();
    };
    const first = setTimeout(
      () => {
        void run();
        this.timers.push(setInterval(() => void run(), (probe.periodSeconds ?? 10) * 1000));
      },
      (probe.initialDelaySeconds ?? 0) * 1000,
    );
    this.timers.push(first);
  }

  /** Posts the pod's status unless it did not change; posts run one at a time, the newest state last. */
  private sendStatus(sandboxReady = true): void {
    if (this.stopped) return;
    const view = {
      hostIps: this.d.node.ips,
      podIps: this.podIps,
      startTime: this.startTime,
      sandboxReady,
      containers: this.containers.map((e) => ({
        name: e.name,
        image: e.image,
        state: e.c.state,
        lastState: e.c.lastState,
        restartCount: e.c.restartCount,
        ready: e.c.running && (e.readiness ? e.readiness.ready : true),
      })),
    };
    this.sending = this.sending.then(async () => {
      const status = podStatus(this.pod, view, new Date());
      const body = JSON.stringify(status);
      if (body === this.lastSent || this.stopped) return;
      const path = `/api/v1/namespaces/${this.pod.metadata?.namespace}/pods/${this.pod.metadata?.name}/status`;
      // The uid in the patch is a precondition, as the kubelet's PatchPodStatus puts it: once this pod is gone, its
      // last status must not land on a namesake created since (nor its answer become this worker's pod).
      const patch = { metadata: { uid: this.pod.metadata?.uid }, status };
      try {
        this.pod = await this.d.client.call<Pod>("PATCH", path, patch, patchContentTypes.merge);
        this.lastSent = body;
      } catch (err) {
        if (!isNotFound(err) && !replacedByNamesake(err))
          this.d.log.warn("pod status update failed", { pod: this.key, error: (err as Error).message });
      }
    });
  }

  /**
   * One container's end as the kubelet's killContainer does it: its preStop hook (exec inside the container, or
   * sleep) within the grace period, then SIGTERM with what is left of it (at least 2 s after a hook), then SIGKILL.
   */
  private async stopContainer(name: string, c: Container, graceSeconds: number): Promise<void> {
    const preStop = this.pod.spec?.containers.find((x) => x.name === name)?.lifecycle?.preStop;
    const graceMs = graceSeconds * 1000;
    const started = Date.now();
    const hook = preStop?.exec?.command;
    if (hook && c.pid !== undefined && graceMs > 0) await execInContainerFor(c.pid, hook, graceMs);
    else if (preStop?.sleep && c.running && graceMs > 0)
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(preStop.sleep?.seconds ?? 0, graceSeconds) * 1000),
      );
    const hooked = (hook || preStop?.sleep) && graceMs > 0;
    await c.stop(hooked ? Math.max(graceMs - (Date.now() - started), 2000) : graceMs);
  }

  /**
   * Stops the containers (their preStop hooks, SIGTERM, the grace period, SIGKILL), posts their stopped status, removes the sandbox, and
   * when the pod object is still there deletes it for good, as the kubelet finalizes a graceful deletion.
   */
  async terminate(graceSeconds: number, deleteObject: boolean): Promise<void> {
    if (this.terminating) return;
    this.terminating = true;
    await Promise.all(this.containers.map((e) => this.stopContainer(e.name, e.c, graceSeconds)));
    for (const t of this.timers) clearTimeout(t);
    // The kubelet posts the stopped containers (not ready) before it removes the sandbox and the object: the pod's
    // endpoint stops serving as the containers stop, not once the teardown is over.
    this.sendStatus();
    await this.sending;
    this.stopped = true;
    await this.removeHostPorts();
    if (this.netns && this.netns !== this.d.node.netns) {
      const result = await teardown([{ kind: "netns", name: this.netns }], {
        ...realTeardownDeps,
        exec: this.d.exec,
      });
      for (const e of result.errors) this.d.log.warn("sandbox teardown", { pod: this.key, error: e });
      this.d.ipams.forEach((ipam, i) => {
        const ip = this.podIps[i];
        if (ip) ipam.release(ip);
      });
    }
    if (!deleteObject) return;
    const ns = this.pod.metadata?.namespace;
    try {
      await this.d.client.call("DELETE", `/api/v1/namespaces/${ns}/pods/${this.pod.metadata?.name}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: this.pod.metadata?.uid },
      });
    } catch (err) {
      // A conflict: the uid precondition failed, the object is a namesake's now and this one is gone.
      if (!isNotFound(err) && !isConflict(err))
        this.d.log.warn("pod delete failed", { pod: this.key, error: (err as Error).message });
    }
  }
}

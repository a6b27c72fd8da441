import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
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
import { podCgroupLimitFiles } from "./cgroup-limits.js";
import { Container, type RestartPolicy } from "./container.js";
import { containerIdentity } from "./container-identity.js";
import { onPty } from "./container-input.js";
import { ContainerLog } from "./container-log.js";
import { ContainerProbes } from "./container-probes.js";
import { hasStorageLimits, type PodStorageUsage, storageEviction } from "./ephemeral-storage.js";
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
import { initRestartPolicy, isSidecar, runInitContainers, stopInOrder } from "./init-containers.js";
import type { Ipam } from "./ipam.js";
import type { ContainerHandle } from "./kubelet-api/container-logs.js";
import { type ContainerCgroups, PodCgroups } from "./pod-cgroups.js";
import { containerEnv, etcHosts, podHostname, resolvConf, writeServiceAccount } from "./pod-files.js";
import { type ContainerView, podStatus } from "./pod-status.js";
import { podSysctls } from "./pod-sysctls.js";
import {
  type ContainerRecord,
  readContainerRecord,
  removeSandboxRecord,
  runtimeDir,
  type SandboxRecord,
  writeContainerRecord,
  writeSandboxRecord,
} from "./runtime-record.js";
import { sandboxArgv } from "./sandbox-command.js";
import { dirBytes, writableLayerBytes } from "./storage-usage.js";
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

/** The kubelet's minimumGracePeriodInSeconds: the least SIGTERM gets before SIGKILL, hooks and turns taken. */
const MIN_GRACE_MS = 2000;

/** How often the eviction manager looks at local storage: the kubelet's housekeeping interval. */
const EVICTION_CHECK_MS = 10_000;
/** The grace period an evicted pod's containers get (the eviction manager's immediateEvictionGracePeriodSeconds). */
const EVICTION_GRACE_SECONDS = 1;

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

interface Entry {
  c: Container;
  /** What the image's files take in the writable layer from the start (not the container's writes). */
  layerBytes: number;
  /** Its startup, liveness and readiness probes; undefined for a container that was never made to run. */
  probes: ContainerProbes | undefined;
  name: string;
  image: string;
  log: ContainerLog;
}

/** One pod on this node, from sandbox to deletion: what a kubelet's pod worker does. */
export class PodWorker {
  /** The main containers made so far, in the spec's order. */
  private containers: Entry[] = [];
  /** The init containers made so far, in the spec's order. */
  private inits: Entry[] = [];
  /** One per family, the primary first; empty before start(). */
  private podIps: string[] = [];
  private netns: string | undefined;
  private timers: NodeJS.Timeout[] = [];
  private lastSent = "";
  private sending: Promise<void> = Promise.resolve();
  /** The deletion was seen: containers are being stopped. Probes and status posts go on meanwhile, as the
   * kubelet's do, so a container that stops being ready while it drains shows as not serving in its slice. */
  private terminating = false;
  /** Set when the agent ended the pod itself (an eviction): its phase is Failed with this reason from then on. */
  private terminal: { reason: string; message: string } | undefined;
  /** The pod's folder; undefined before start(). */
  private dir: string | undefined;
  /** Every container has stopped: nothing more is probed or posted. */
  private stopped = false;
  private startTime = formatTime(Date.now());
  /** The sandbox a previous agent of this node left for the pod (runtime-record.ts), which start() adopts. */
  private adopted: SandboxRecord | undefined;
  /**
   * Containers are being taken over: no status is posted until all are (or one must be waited for), so the status
   * the previous agent posted stays as it was rather than showing containers not adopted yet as being created.
   */
  private adopting = false;
  /** start() has made every container: status posts describe them all. */
  private started = false;
  /** The pod's hostPorts are in the node's maps (taken out when it terminates). */
  private hostPortsAdded = false;
  /** The pod's cgroups below the node's; undefined where the node has no cgroup2 directory. */
  private cgroups: PodCgroups | undefined;

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
    const e = [...this.inits, ...this.containers].find((entry) => entry.name === name);
    if (!e) return undefined;
    const view = { state: e.c.state, lastState: e.c.lastState, current: e.log.current };
    return { view, log: e.log, pid: e.c.pid, input: e.c.input };
  }

  /**
   * Makes the pod's sandbox and starts its containers in order; with `adopted`, takes over the sandbox and the
   * containers a previous agent left running instead, as a restarted kubelet finds them through its runtime.
   */
  async start(adopted?: SandboxRecord): Promise<void> {
    this.adopted = adopted;
    this.adopting = adopted !== undefined;
    const spec = this.pod.spec;
    if (!spec) return;
    const initSpecs = spec.initContainers ?? [];
    const runnables = [...initSpecs, ...spec.containers].map((c) => ({
      container: c,
      run: resolveImage(c, this.d.images),
    }));
    const unknown = runnables.find((r) => r.run.kind === "unknown");
    if (unknown && unknown.run.kind === "unknown") {
      this.failImages(unknown.run.message);
      return;
    }
    const sysctls = podSysctls(this.pod);
    if ("forbidden" in sysctls) {
      this.reject("SysctlForbidden", sysctls.forbidden);
      return;
    }
    const hostNetwork = spec.hostNetwork === true;
    const uid = this.pod.metadata?.uid ?? "";
    const dir =
      adopted?.dir ??
      join(this.d.podsDir, `${this.pod.metadata?.namespace}_${this.pod.metadata?.name}_${uid.slice(0, 8)}`);
    // Only root passes: it holds the pod's Secrets and tokens, whose own folders are open for non-root containers.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    this.dir = dir;
    const nodeCgroup = this.d.node.cgroup;
    if (nodeCgroup)
      this.cgroups = new PodCgroups(
        { unified: nodeCgroup, ...(this.d.node.limits ? { limits: this.d.node.limits } : {}) },
        uid,
        podCgroupLimitFiles(this.pod),
      );
    if (hostNetwork) {
      this.podIps = this.d.node.ips;
      this.netns = this.d.node.netns;
    } else if (adopted) {
      this.podIps = adopted.podIps;
      this.netns = adopted.netns;
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
        sysctls: sysctls.values,
      });
      await applySteps(steps, this.d.exec, this.d.journal);
    }
    if (adopted) this.startTime = adopted.startTime;
    writeSandboxRecord({
      uid,
      node: this.d.node.name,
      dir,
      netns: this.netns,
      podIps: this.podIps,
      startTime: this.startTime,
    });
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
    this.started = true;
    if (hasStorageLimits(this.pod))
      this.timers.push(setInterval(() => this.checkStorage(), EVICTION_CHECK_MS));
    const podPolicy = spec.restartPolicy;
    const initialized = await runInitContainers(
      initSpecs,
      async (c) => {
        const e = await this.startContainer(c, shared, this.inits, initRestartPolicy(c, podPolicy));
        // An adopted init container still running is waited for, with its status posted meanwhile.
        if (!isSidecar(c) && !e.c.state.terminated) this.adopting = false;
        return { c: e.c, started: e.probes?.started };
      },
      () => this.ending,
    );
    if (initialized) {
      const policy = (podPolicy ?? "Always") as RestartPolicy;
      for (const c of spec.containers) await this.startContainer(c, shared, this.containers, policy);
      if (policy !== "Always") void this.stopSidecarsOnceMainEnd();
    }
    this.adopting = false;
    this.sendStatus();
  }

  /** Deleted, or ended by the agent: no container starts any more. */
  private get ending(): boolean {
    return this.terminating || this.terminal !== undefined;
  }

  /** What the pod's containers and emptyDirs hold now (storage-usage.ts). */
  private storageUsage(): PodStorageUsage {
    const dir = this.dir ?? "";
    const containers = new Map(
      [...this.inits, ...this.containers].map((e) => [
        e.name,
        Math.max(writableLayerBytes(e.c.pid) - e.layerBytes, 0) + dirBytes(join(dir, "logs", e.name)),
      ]),
    );
    const emptyDirs = new Map(
      (this.pod.spec?.volumes ?? [])
        .filter((v) => v.emptyDir && v.emptyDir.medium !== "Memory")
        .map((v) => [v.name, dirBytes(join(dir, "volumes", v.name))]),
    );
    return { containers, emptyDirs };
  }

  /** The eviction manager's local-storage check (ephemeral-storage.ts); a pod over a limit is evicted. */
  private checkStorage(): void {
    if (this.ending) return;
    const message = storageEviction(this.pod, this.storageUsage());
    if (message) void this.evict(message);
  }

  /**
   * Ends the pod as the eviction manager does: its containers stopped with a 1 s grace period, then a terminal
   * status (phase Failed, reason Evicted, the message). The object stays until someone deletes it.
   */
  private async evict(message: string): Promise<void> {
    this.terminal = { reason: "Evicted", message };
    this.d.log.info("pod evicted", { pod: this.key, message });
    await this.stopAll(EVICTION_GRACE_SECONDS);
    this.sendStatus();
  }

  /** Every container stopped, sidecars last (stopInOrder). */
  private async stopAll(graceSeconds: number): Promise<void> {
    const sidecars = this.sidecars();
    const others = [...this.containers, ...this.inits.filter((e) => !sidecars.includes(e))];
    await stopInOrder(others, sidecars, (e, waitTurn) =>
      this.stopContainer(e.name, e.c, graceSeconds, waitTurn),
    );
  }

  /** A pod whose main containers have all ended for good (restartPolicy Never or OnFailure) stops its sidecars, so
   * that it can complete, as the kubelet does. */
  private async stopSidecarsOnceMainEnd(): Promise<void> {
    await Promise.all(this.containers.map((e) => e.c.settled));
    if (this.ending) return;
    const grace = this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    await stopInOrder([], this.sidecars(), (e, waitTurn) => this.stopContainer(e.name, e.c, grace, waitTurn));
  }

  private sidecars(): Entry[] {
    const specs = this.pod.spec?.initContainers ?? [];
    return this.inits.filter((e) => specs.some((c) => c.name === e.name && isSidecar(c)));
  }

  /**
   * The pod is refused before anything of it is made, as the kubelet's admit handlers refuse one: phase Failed
   * with the reason and message, no container started.
   */
  private reject(reason: string, message: string): void {
    this.d.log.warn("pod rejected", { pod: this.key, reason, message });
    this.terminal = { reason, message };
    this.sendStatus(false);
  }

  /** An image of the pod cannot run here: every container waits in ErrImagePull with the reason, none starts. */
  private failImages(message: string): void {
    const spec = this.pod.spec;
    this.d.log.warn("image not known", { pod: this.key, message });
    const waiting = (c: PodContainer): Entry => {
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
      return { c: container, layerBytes: 0, probes: undefined, name: c.name, image: c.image ?? "", log };
    };
    this.inits = (spec?.initContainers ?? []).map(waiting);
    this.containers = (spec?.containers ?? []).map(waiting);
    this.sendStatus(false);
  }

  /**
   * One container of the pod, added to `list` (the init or the main ones): its volumes, its root and process
   * (sandbox-command.ts), its log, its probes.
   */
  private async startContainer(
    container: PodContainer,
    s: SandboxShared,
    list: Entry[],
    restartPolicy: RestartPolicy,
  ): Promise<Entry> {
    const env = containerEnv(
      this.pod,
      container.env ?? [],
      { pod: this.podIps, host: this.d.node.ips },
      this.d.plan,
      container.name,
    );
    const run = resolveImage(container, this.d.images, env);
    const volumes = planVolumes(this.pod, container, s.dir);
    // CreateContainerConfigError: what the pod names is missing; CreateContainerError: the runtime could not make it.
    let configError: { reason: string; message: string } | undefined;
    try {
      await prepareVolumes(volumes, { client: this.d.client, pod: this.pod, container: container.name });
    } catch (err) {
      configError = { reason: "CreateContainerConfigError", message: (err as Error).message };
    }
    for (const v of volumes.unsupported) this.d.log.warn("volume not mounted", { pod: this.key, volume: v });
    const identity =
      run.kind === "process" ? containerIdentity(this.pod, container, run, this.d.images.node) : undefined;
    if (identity && "error" in identity)
      configError ??= { reason: "CreateContainerConfigError", message: identity.error };
    let cgroups: ContainerCgroups | undefined;
    try {
      cgroups = this.cgroups?.container(container);
    } catch (err) {
      configError ??= { reason: "CreateContainerError", message: (err as Error).message };
    }
    const rootDir = join(s.dir, "rootfs", container.name);
    mkdirSync(rootDir, { recursive: true });
    const layerDir =
      run.kind === "process" && run.layer ? ensureLayer(this.d.layersDir, run.layer) : undefined;
    const argv =
      run.kind === "process"
        ? sandboxArgv({
            netns: s.netns,
            hostname: s.etc.hostname,
            rootDir,
            layerDir,
            hostMounts: s.hostMounts,
            etc: s.etc.files,
            serviceAccountDir: s.saDir,
            ...(container.workingDir ? { workingDir: container.workingDir } : {}),
            argv: container.tty ? onPty(run.argv) : run.argv,
            mounts: volumes.mounts,
            ...(cgroups ? { cgroupProcs: cgroups.procs } : {}),
            ...(identity && !("error" in identity) ? { identity } : {}),
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
    const record = this.adopted ? readContainerRecord(s.dir, container.name) : undefined;
    const c = new Container({
      name: container.name,
      argv,
      env,
      output,
      log,
      restartPolicy: configError ? "Never" : restartPolicy,
      ...(cgroups ? { oomKills: cgroups.oomKills } : {}),
      input: {
        stdin: container.stdin === true,
        stdinOnce: container.stdinOnce === true,
        tty: container.tty === true,
      },
      runtime: {
        exitFile: (instance) => join(runtimeDir(s.dir), `${container.name}.${instance}.exit`),
        save: (saved) => writeContainerRecord(s.dir, container.name, saved),
      },
      onChange: () => this.sendStatus(),
    });
    const entry: Entry = {
      c,
      layerBytes: layerDir ? dirBytes(layerDir) : 0,
      probes: undefined,
      name: container.name,
      image: container.image ?? "",
      log,
    };
    list.push(entry);
    // A container that runs already is adopted whatever its config says now (a Secret deleted while no agent ran),
    // as the kubelet keeps a running container; the error keeps it from starting again (restartPolicy above).
    if (configError && !record?.state.running) {
      this.d.log.warn("container not started", { pod: this.key, error: configError.message });
      c.state = { waiting: configError };
      return entry;
    }
    // Deleted or evicted while this one was being made: what stopped the others did not see it, so it never starts
    // (an adopted one is taken over first, so that its process is stopped too).
    if (this.ending) {
      if (record) c.adopt(record);
      await c.stop(0);
      return entry;
    }
    const probes = new ContainerProbes(container, c, {
      podIp: () => this.podIp,
      deleting: () => this.ending,
      stopped: () => this.stopped,
      changed: () => this.sendStatus(),
      restart: (kind, graceSeconds) => void this.restartAfterProbe(entry, container, kind, graceSeconds),
      warn: (message) => this.d.log.warn(message, { pod: this.key, container: container.name }),
    });
    entry.probes = probes;
    await this.run(c, probes, container.name, record);
    probes.noteStarted();
    probes.schedule(this.timers);
    return entry;
  }

  /** Starts the container, or takes over the instance its record names, with the probe results the status showed. */
  private async run(
    c: Container,
    probes: ContainerProbes,
    name: string,
    record: ContainerRecord | undefined,
  ): Promise<void> {
    if (!record) return c.start();
    const s = this.pod.status;
    const shown = [...(s?.initContainerStatuses ?? []), ...(s?.containerStatuses ?? [])].find(
      (x) => x.name === name,
    );
    if (shown && record.state.running)
      probes.resume(record.restartCount, { ready: shown.ready, ...(shown.started ? { started: true } : {}) });
    c.adopt(record);
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

  /** A failed liveness or startup probe: the instance is ended (its preStop hook first) and its policy decides. */
  private async restartAfterProbe(
    e: Entry,
    spec: PodContainer,
    kind: string,
    probeGraceSeconds: number | undefined,
  ): Promise<void> {
    this.d.log.info(`container failed ${kind} probe, will be restarted`, {
      pod: this.key,
      container: spec.name,
    });
    const grace = probeGraceSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    await this.stopContainer(
      spec.name,
      e.c,
      grace,
      async () => {},
      (ms) => e.c.kill(ms),
    );
  }

  /** A container's view for the status; one not made yet waits as the kubelet shows it (PodInitializing while
   * init containers run). */
  private containerView(spec: PodContainer, list: readonly Entry[], hasInits: boolean): ContainerView {
    const e = list.find((x) => x.name === spec.name);
    if (!e) {
      const reason = hasInits ? "PodInitializing" : "ContainerCreating";
      return {
        name: spec.name,
        image: spec.image ?? "",
        state: { waiting: { reason } },
        lastState: {},
        restartCount: 0,
        ready: false,
      };
    }
    return {
      name: e.name,
      image: e.image,
      state: e.c.state,
      lastState: e.c.lastState,
      restartCount: e.c.restartCount,
      ready: e.probes ? e.probes.ready : e.c.running,
      started: e.probes ? e.probes.isStarted : e.c.running,
    };
  }

  /** Posts the pod's status unless it did not change; posts run one at a time, the newest state last. */
  private sendStatus(sandboxReady = true): void {
    if (this.stopped || this.adopting) return;
    const spec = this.pod.spec;
    const hasInits = (spec?.initContainers?.length ?? 0) > 0;
    const view = {
      hostIps: this.d.node.ips,
      podIps: this.podIps,
      startTime: this.startTime,
      sandboxReady,
      ...(this.terminal ? { terminal: this.terminal } : {}),
      containers: (spec?.containers ?? []).map((c) => this.containerView(c, this.containers, hasInits)),
      initContainers: (spec?.initContainers ?? []).map((c) => {
        const v = this.containerView(c, this.inits, true);
        // A regular init container is ready once it has succeeded, as the kubelet's prober reports it.
        const ready = isSidecar(c) ? v.ready : v.state.terminated?.exitCode === 0;
        return { ...v, ready, restartable: isSidecar(c) };
      }),
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
   * sleep) within the grace period, then its turn (a sidecar waits for the containers that stop before it), then
   * SIGTERM with what is left of the grace period, at least 2 s as the kubelet's minimum, then SIGKILL. A grace
   * period of 0 (a forced deletion) kills at once.
   */
  private async stopContainer(
    name: string,
    c: Container,
    graceSeconds: number,
    waitTurn: (leftMs: number) => Promise<void> = async () => {},
    end: (graceMs: number) => Promise<void> = (ms) => c.stop(ms),
  ): Promise<void> {
    const specs = [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])];
    const preStop = specs.find((x) => x.name === name)?.lifecycle?.preStop;
    const graceMs = graceSeconds * 1000;
    if (graceMs === 0) return end(0);
    const started = Date.now();
    const hook = preStop?.exec?.command;
    if (hook && c.pid !== undefined) await execInContainerFor(c.pid, hook, graceMs);
    else if (preStop?.sleep && c.running)
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(preStop.sleep?.seconds ?? 0, graceSeconds) * 1000),
      );
    await waitTurn(graceMs - (Date.now() - started));
    await end(Math.max(graceMs - (Date.now() - started), MIN_GRACE_MS));
  }

  /**
   * Stops the containers (their preStop hooks, SIGTERM, the grace period, SIGKILL; sidecars last, stopInOrder),
   * posts their stopped status, removes the sandbox, and when the pod object is still there deletes it for good, as
   * the kubelet finalizes a graceful deletion.
   */
  async terminate(graceSeconds: number, deleteObject: boolean): Promise<void> {
    if (this.terminating) return;
    this.terminating = true;
    await this.stopAll(graceSeconds);
    for (const t of this.timers) clearTimeout(t);
    // The kubelet posts the stopped containers (not ready) before it removes the sandbox and the object: the pod's
    // endpoint stops serving as the containers stop, not once the teardown is over.
    this.sendStatus();
    await this.sending;
    this.stopped = true;
    await this.removeHostPorts();
    this.cgroups?.remove();
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
    if (this.dir) removeSandboxRecord(this.dir);
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

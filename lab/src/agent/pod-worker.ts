import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatTime } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import { contentTypes, isNotFound, type KubeClient } from "../kubeapi/client.js";
import type { Exec } from "../netns/exec.js";
import { applySteps } from "../netns/executor.js";
import type { Journal } from "../netns/journal.js";
import type { LabPlan, NodePlan } from "../netns/plan.js";
import { podSandboxSteps } from "../netns/steps.js";
import { realTeardownDeps, teardown } from "../netns/teardown.js";
import { Container, type RestartPolicy } from "./container.js";
import { onPty } from "./container-input.js";
import { ContainerLog } from "./container-log.js";
import { type ImageContext, resolveImage } from "./images.js";
import type { Ipam } from "./ipam.js";
import type { ContainerHandle } from "./kubelet-api/container-logs.js";
import type { Logger } from "./log.js";
import { containerEnv, resolvConf, writeServiceAccount } from "./pod-files.js";
import { podStatus } from "./pod-status.js";
import { probeOnce, Readiness } from "./probes.js";
import { sandboxArgv } from "./sandbox-command.js";
import { prepareVolumes } from "./volume-files.js";
import { planVolumes } from "./volumes.js";

export interface WorkerDeps {
  client: KubeClient;
  plan: LabPlan;
  node: NodePlan;
  ipam: Ipam;
  exec: Exec;
  journal: Journal;
  podsDir: string;
  caFile: string;
  hostResolv: string;
  images: ImageContext;
  log: Logger;
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
  private podIp: string | undefined;
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

  constructor(
    private pod: Pod,
    private readonly d: WorkerDeps,
  ) {}

  private get key(): string {
    return `${this.pod.metadata?.namespace}/${this.pod.metadata?.name}`;
  }

  update(pod: Pod): void {
    this.pod = pod;
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
      const message = unknown.run.message;
      this.d.log.warn("image not known", { pod: this.key, message });
      this.containers = spec.containers.map((c) => {
        const container = new Container({
          name: c.name,
          argv: undefined,
          env: {},
          logFile: "",
          restartPolicy: "Never",
          onChange: () => {},
        });
        container.state = { waiting: { reason: "ErrImagePull", message } };
        // Never started, so its log stays empty; the paths are never written.
        const log = new ContainerLog("", "");
        return { c: container, readiness: undefined, name: c.name, image: c.image ?? "", log };
      });
      this.sendStatus(false);
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
      this.podIp = this.d.node.ip;
      this.netns = this.d.node.netns;
    } else {
      this.podIp = this.d.ipam.allocate();
      this.netns = `${podNetnsPrefix(this.d.plan, this.d.node)}${uid.slice(0, 8)}`;
      const steps = podSandboxSteps({
        node: this.d.node,
        netns: this.netns,
        hostVeth: `veth${uid.slice(0, 8)}`,
        ip: this.podIp,
        prefixLength: this.d.ipam.prefixLength,
        gateway: this.d.ipam.gateway,
      });
      await applySteps(steps, this.d.exec, this.d.journal);
    }
    const resolvFile = join(dir, "resolv.conf");
    writeFileSync(resolvFile, resolvConf(this.pod, this.d.plan, this.d.hostResolv));
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
    for (const { container } of runnables) {
      const env = containerEnv(this.pod, container.env ?? [], this.podIp, this.d.node.ip, this.d.plan);
      const run = resolveImage(container, this.d.images, env);
      const volumes = planVolumes(this.pod, container, dir);
      let configError: string | undefined;
      try {
        await prepareVolumes(volumes, this.pod.metadata?.namespace ?? "default", this.d);
      } catch (err) {
        configError = (err as Error).message;
      }
      for (const v of volumes.unsupported)
        this.d.log.warn("volume not mounted", { pod: this.key, volume: v });
      const argv =
        run.kind === "process"
          ? sandboxArgv({
              netns: this.netns,
              hostname: hostNetwork ? this.d.node.name : (this.pod.metadata?.name ?? ""),
              resolvConf: resolvFile,
              serviceAccountDir: saDir,
              argv: container.tty ? onPty(run.argv) : run.argv,
              mounts: volumes.mounts,
            })
          : undefined;
      const logFile = join(dir, `${container.name}.log`);
      // Instance logs in a folder per container, as the kubelet keeps /var/log/pods/<pod>/<container>/.
      const log = new ContainerLog(logFile, join(dir, "logs", container.name));
      const c = new Container({
        name: container.name,
        argv,
        env,
        logFile,
        log,
        restartPolicy: (spec.restartPolicy ?? "Always") as RestartPolicy,
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
        continue;
      }
      c.start();
      if (probe && entry.readiness) this.startProbing(container, entry.readiness, c);
    }
    this.sendStatus();
  }

  private startProbing(
    container: NonNullable<Pod["spec"]>["containers"][number],
    readiness: Readiness,
    c: Container,
  ) {
    const probe = container.readinessProbe ?? {};
    const run = async () => {
      if (this.stopped || !this.podIp) return;
      const result = c.running ? await probeOnce(probe, this.podIp, container) : "failure";
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
      hostIp: this.d.node.ip,
      podIp: this.podIp,
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
      try {
        this.pod = await this.d.client.call<Pod>("PATCH", path, { status }, contentTypes.merge);
        this.lastSent = body;
      } catch (err) {
        if (!isNotFound(err))
          this.d.log.warn("pod status update failed", { pod: this.key, error: (err as Error).message });
      }
    });
  }

  /**
   * Stops the containers (SIGTERM, the grace period, SIGKILL), removes the sandbox, and when the pod object is
   * still there deletes it for good, as the kubelet finalizes a graceful deletion.
   */
  async terminate(graceSeconds: number, deleteObject: boolean): Promise<void> {
    if (this.terminating) return;
    this.terminating = true;
    await Promise.all(this.containers.map((e) => e.c.stop(graceSeconds * 1000)));
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.netns && this.netns !== this.d.node.netns) {
      const result = await teardown([{ kind: "netns", name: this.netns }], {
        ...realTeardownDeps,
        exec: this.d.exec,
      });
      for (const e of result.errors) this.d.log.warn("sandbox teardown", { pod: this.key, error: e });
      if (this.podIp) this.d.ipam.release(this.podIp);
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
      if (!isNotFound(err))
        this.d.log.warn("pod delete failed", { pod: this.key, error: (err as Error).message });
    }
  }
}

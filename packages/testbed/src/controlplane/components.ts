import {
  apiserverArgs,
  controllerManagerArgs,
  etcdArgs,
  etcdClientUrl,
  type StatePaths,
  schedulerArgs,
} from "./args.js";
import { type ClientTls, probe } from "./health.js";
import type { ControlPlaneOptions } from "./options.js";
import type { Pki } from "./pki.js";

export type ComponentName = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";

/** A port a component listens on, named as the port-in-use message names it, with the flag that moves it. */
export interface ComponentPort {
  port: number;
  what: string;
  flag: string;
}

/** One control-plane process as data: whether it runs, its ports, its command line, and when it is ready. */
export interface Component {
  name: ComponentName;
  /** Start-up groups run in order; a group's components start together and are all ready before the next. */
  group: number;
  enabled: (o: ControlPlaneOptions) => boolean;
  ports: (o: ControlPlaneOptions) => ComponentPort[];
  args: (o: ControlPlaneOptions, paths: StatePaths, pki: Pki) => string[];
  /** What progress and errors say is awaited: "kube-apiserver /readyz". */
  waitingFor: string;
  ready: (o: ControlPlaneOptions, server: string, pki: Pki) => Promise<boolean>;
}

export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

export function adminTls(pki: Pki): ClientTls {
  return { ca: pki.caCert, cert: pki.clients.admin.cert, key: pki.clients.admin.key };
}

/** How the lab checks etcd's health: kubeadm's healthcheck-client certificate, etcd's CA. */
export function etcdHealthTls(pki: Pki): ClientTls {
  return { ca: pki.etcd.caCert, cert: pki.etcd.healthcheckClient.cert, key: pki.etcd.healthcheckClient.key };
}

/** etcd's /health over mutual TLS: `{"health":"true",...}` once it has a leader and answers reads. */
export async function etcdHealthy(o: ControlPlaneOptions, pki: Pki): Promise<boolean> {
  return (await probe(`${etcdClientUrl(o)}/health`, etcdHealthTls(pki))).body.includes('"health":"true"');
}

/** The controller-manager and scheduler serve /healthz with a self-signed certificate: not checked. */
async function healthzAnswers(o: ControlPlaneOptions, port: number, pki: Pki): Promise<boolean> {
  const url = `https://${hostPort(o.bindAddress, port)}/healthz`;
  return (await probe(url, { ...adminTls(pki), insecure: true })).status === 200;
}

/** In start order: etcd, then the apiserver that stores in it, then its two clients (each optional). */
export const components: readonly Component[] = [
  {
    name: "etcd",
    group: 0,
    enabled: () => true,
    ports: (o) => [
      { port: o.ports.etcdClient, what: "etcd client", flag: "--etcd-port" },
      { port: o.ports.etcdPeer, what: "etcd peer", flag: "--etcd-peer-port" },
    ],
    args: etcdArgs,
    waitingFor: "etcd",
    ready: (o, _server, pki) => etcdHealthy(o, pki),
  },
  {
    name: "kube-apiserver",
    group: 1,
    enabled: () => true,
    ports: (o) => [{ port: o.ports.apiserver, what: "kube-apiserver", flag: "--apiserver-port" }],
    args: apiserverArgs,
    waitingFor: "kube-apiserver /readyz",
    ready: async (_o, server, pki) => (await probe(`${server}/readyz`, adminTls(pki))).status === 200,
  },
  {
    name: "kube-controller-manager",
    group: 2,
    enabled: (o) => o.controllerManager,
    ports: (o) => [
      { port: o.ports.controllerManager, what: "kube-controller-manager", flag: "--controller-manager-port" },
    ],
    args: controllerManagerArgs,
    waitingFor: "kube-controller-manager",
    ready: (o, _server, pki) => healthzAnswers(o, o.ports.controllerManager, pki),
  },
  {
    name: "kube-scheduler",
    group: 2,
    enabled: (o) => o.scheduler,
    ports: (o) => [{ port: o.ports.scheduler, what: "kube-scheduler", flag: "--scheduler-port" }],
    args: (o, paths) => schedulerArgs(o, paths),
    waitingFor: "kube-scheduler",
    ready: (o, _server, pki) => healthzAnswers(o, o.ports.scheduler, pki),
  },
];

/** The components `up` starts with these options, in start order. */
export function enabledComponents(o: ControlPlaneOptions): Component[] {
  return components.filter((c) => c.enabled(o));
}

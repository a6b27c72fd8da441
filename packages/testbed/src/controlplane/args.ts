import { join } from "node:path";
import { etcdMemberName } from "./etcd-pki.js";
import type { ControlPlaneOptions } from "./options.js";
import type { Pki } from "./pki.js";

/** The files of a control plane's state folder. */
export interface StatePaths {
  dir: string;
  pki: string;
  etcdData: string;
  logs: string;
  stateFile: string;
  adminKubeconfig: string;
  controllerManagerKubeconfig: string;
  schedulerKubeconfig: string;
}

export function statePaths(dir: string): StatePaths {
  return {
    dir,
    pki: join(dir, "pki"),
    etcdData: join(dir, "etcd"),
    logs: join(dir, "logs"),
    stateFile: join(dir, "controlplane.json"),
    adminKubeconfig: join(dir, "admin.kubeconfig"),
    controllerManagerKubeconfig: join(dir, "controller-manager.kubeconfig"),
    schedulerKubeconfig: join(dir, "scheduler.kubeconfig"),
  };
}

const url = (host: string, port: number, scheme: "http" | "https") =>
  `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`;

/** Where etcd serves its clients: https only, every client with a certificate of etcd's CA. */
export function etcdClientUrl(o: ControlPlaneOptions): string {
  return url(o.bindAddress, o.ports.etcdClient, "https");
}

/**
 * etcd as kubeadm's static pod runs it (cmd/kubeadm/app/phases/etcd/local.go): mutual TLS for clients and peers,
 * each side's certificate checked against etcd's own CA (--client-cert-auth, --peer-client-cert-auth).
 */
export function etcdArgs(o: ControlPlaneOptions, paths: StatePaths, pki: Pki): string[] {
  const client = etcdClientUrl(o);
  const peer = url(o.bindAddress, o.ports.etcdPeer, "https");
  return [
    `--name=${etcdMemberName}`,
    `--data-dir=${paths.etcdData}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${etcdMemberName}=${peer}`,
    `--cert-file=${pki.etcd.server.cert}`,
    `--key-file=${pki.etcd.server.key}`,
    `--trusted-ca-file=${pki.etcd.caCert}`,
    "--client-cert-auth=true",
    `--peer-cert-file=${pki.etcd.peer.cert}`,
    `--peer-key-file=${pki.etcd.peer.key}`,
    `--peer-trusted-ca-file=${pki.etcd.caCert}`,
    "--peer-client-cert-auth=true",
    // A lab loses nothing that matters on a crash; fsync would dominate write latency on a small VM.
    "--unsafe-no-fsync=true",
    "--auto-compaction-mode=periodic",
    "--auto-compaction-retention=5m",
    "--quota-backend-bytes=8589934592",
    "--log-level=warn",
  ];
}

export function apiserverArgs(o: ControlPlaneOptions, _paths: StatePaths, pki: Pki): string[] {
  const args = [
    `--etcd-servers=${etcdClientUrl(o)}`,
    `--etcd-cafile=${pki.etcd.caCert}`,
    `--etcd-certfile=${pki.etcd.apiserverClient.cert}`,
    `--etcd-keyfile=${pki.etcd.apiserverClient.key}`,
    `--bind-address=${o.apiserverBindAddress}`,
    `--secure-port=${o.ports.apiserver}`,
    `--advertise-address=${o.advertiseAddress}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--service-cluster-ip-range=${o.serviceCidr}`,
    // Logs and the node proxy: the apiserver dials each kubelet with this identity, at the Node's InternalIP
    // (the default order tries Hostname first, which no resolver here knows; kubeadm's order), and checks the
    // kubelet's serving certificate against the lab CA that signed it (pki.ts, ensureKubeletServingCert).
    `--kubelet-client-certificate=${pki.clients["apiserver-kubelet-client"].cert}`,
    `--kubelet-client-key=${pki.clients["apiserver-kubelet-client"].key}`,
    "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
    `--kubelet-certificate-authority=${pki.caCert}`,
    "--authorization-mode=Node,RBAC",
    "--allow-privileged=true",
    "--anonymous-auth=false",
    "--enable-priority-and-fairness=false",
    "--max-requests-inflight=0",
    "--max-mutating-requests-inflight=0",
    // On SIGTERM the apiserver waits for its requests to end, watches included, up to --request-timeout (60 s):
    // one client watching held every stop to the 10 s grace and a SIGKILL. With this it drains the short
    // requests, answers new ones 429 with Retry-After, and gives the rest 2 s.
    "--shutdown-send-retry-after=true",
    "--profiling=false",
  ];
  // The endpoint reconciler refuses a loopback advertise address; a loopback-only control plane has no address
  // that pods could reach anyway, so it runs without the `kubernetes` Service's endpoints.
  if (isLoopback(o.advertiseAddress)) args.push("--endpoint-reconciler-type=none");
  // Without the controller-manager nothing creates ServiceAccounts, and the admission plugin would refuse every pod.
  if (!o.controllerManager) args.push("--disable-admission-plugins=ServiceAccount");
  // Named plugins are enabled in addition to the default set, which stays on.
  if (o.extraAdmissionPlugins.length > 0) {
    args.push(`--enable-admission-plugins=${o.extraAdmissionPlugins.join(",")}`);
  }
  return args;
}

export function controllerManagerArgs(o: ControlPlaneOptions, paths: StatePaths, pki: Pki): string[] {
  return [
    `--kubeconfig=${paths.controllerManagerKubeconfig}`,
    `--authentication-kubeconfig=${paths.controllerManagerKubeconfig}`,
    `--authorization-kubeconfig=${paths.controllerManagerKubeconfig}`,
    `--bind-address=${o.bindAddress}`,
    `--secure-port=${o.ports.controllerManager}`,
    // Switchyard's slice controller replaces these two, unless upstream's stack runs.
    `--controllers=${o.sliceControllers ? "*" : "*,-endpointslice-controller,-endpointslice-mirroring-controller"}`,
    `--root-ca-file=${pki.caCert}`,
    `--service-account-private-key-file=${pki.saKey}`,
    "--use-service-account-credentials=true",
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    `--service-cluster-ip-range=${o.serviceCidr}`,
    `--cluster-cidr=${o.clusterCidr}`,
    "--allocate-node-cidrs=true",
    // At start-up the controller-manager creates a ServiceAccount for each of its ~45 controllers (two or three
    // requests each) through one client, which the default 20 requests/s (burst 30) held to 4.9 s, during which no
    // controller runs: nodes waited that long for their pod CIDRs. Large clusters raise these too.
    "--kube-api-qps=100",
    "--kube-api-burst=200",
    // One controller-manager per lab: no lease to wait for after a restart.
    "--leader-elect=false",
    "--profiling=false",
  ];
}

export function schedulerArgs(o: ControlPlaneOptions, paths: StatePaths): string[] {
  return [
    `--kubeconfig=${paths.schedulerKubeconfig}`,
    `--authentication-kubeconfig=${paths.schedulerKubeconfig}`,
    `--authorization-kubeconfig=${paths.schedulerKubeconfig}`,
    `--bind-address=${o.bindAddress}`,
    `--secure-port=${o.ports.scheduler}`,
    "--leader-elect=false",
    "--profiling=false",
  ];
}

export function apiserverUrl(o: ControlPlaneOptions): string {
  return url(o.apiserverBindAddress, o.ports.apiserver, "https");
}

function isLoopback(ip: string): boolean {
  return ip.startsWith("127.") || ip === "::1";
}

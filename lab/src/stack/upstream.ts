import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HttpRestClient } from "@switchyard/kube";
import type { Progress } from "@switchyard/testbed/progress";
import { buildUpstream, readVersions, resolveBinary } from "@switchyard/testbed/upstream";
import yaml from "js-yaml";
import type { Exec } from "../exec.js";
import { type StackLab, waitForProxies, waitForStack } from "./deploy.js";
import type { ProxyMode } from "./manifests.js";

export interface UpstreamStackOptions {
  proxyMode: ProxyMode;
  /** The apiserver's URL as the nodes reach it; kubeadm writes it into kube-proxy's kubeconfig. */
  server: string;
  /** The admin kubeconfig kubeadm creates the objects with. */
  kubeconfig: string;
  /** Where the kubeadm configuration is written (kept, so a user sees what kubeadm was given). */
  dir: string;
  deadline: number;
}

/**
 * What kubeadm needs to install its two addons into a lab: the release (without it kubeadm asks the internet for
 * the latest stable one), the apiserver as the nodes reach it, the lab's CIDRs (kube-dns gets the tenth service
 * address, as the lab's pods are told), and kube-proxy's mode.
 */
export function kubeadmAddonConfig(o: {
  kubernetesVersion: string;
  server: string;
  serviceCidr: string;
  clusterCidr: string;
  proxyMode: ProxyMode;
}): string {
  const cluster = {
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "ClusterConfiguration",
    kubernetesVersion: o.kubernetesVersion,
    controlPlaneEndpoint: new URL(o.server).host,
    networking: { serviceSubnet: o.serviceCidr, podSubnet: o.clusterCidr, dnsDomain: "cluster.local" },
  };
  const proxy = {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: o.proxyMode,
  };
  return [cluster, proxy].map((d) => yaml.dump(d, { lineWidth: -1 })).join("---\n");
}

/**
 * Upstream's stack on a netns lab, installed as kubeadm installs it: `kubeadm init phase addon kube-proxy`, then
 * `... addon coredns`, create the kube-proxy DaemonSet and CoreDNS Deployment with their ConfigMaps, RBAC and the kube-dns Service, exactly as in
 * a kubeadm cluster. The node agents run their images from packages/testbed/upstream's binaries
 * (agent/images.ts), and the controller-manager runs its own EndpointSlice controllers (the lab's control
 * plane was started with them). kubeadm is built on demand when missing, as the kind node image build does.
 */
export async function deployUpstreamStack(
  client: HttpRestClient,
  plan: StackLab,
  o: UpstreamStackOptions,
  progress: Progress,
  exec: Exec,
) {
  if (!resolveBinary("kubeadm").path) {
    progress.update("building kubeadm from packages/testbed/upstream (once; cached)", true);
    await buildUpstream({ only: ["kubeadm"] });
  }
  const kubeadm = resolveBinary("kubeadm").path ?? "kubeadm";
  const config = join(o.dir, "kubeadm-addons.yaml");
  const text = kubeadmAddonConfig({
    kubernetesVersion: readVersions().kubernetes,
    server: o.server,
    serviceCidr: plan.serviceCidr,
    clusterCidr: plan.clusterCidr,
    proxyMode: o.proxyMode,
  });
  writeFileSync(config, text);
  // kubeadm's two addon phases one after the other, with every node's proxy synced in between. In a kubeadm
  // cluster CoreDNS stays Pending until the network plugin makes a node Ready, long after kube-proxy has synced;
  // a lab node is Ready at once, and a CoreDNS that dialled the apiserver's ClusterIP before the rule existed
  // hung 30 s on its first list (its conntrack entry un-NATed), which `addon all` hit on every 3-node lab.
  const phase = (addon: string) =>
    exec([kubeadm, "init", "phase", "addon", addon, "--config", config, "--kubeconfig", o.kubeconfig]);
  progress.update(`kubeadm init phase addon kube-proxy (mode ${o.proxyMode})`, true);
  await phase("kube-proxy");
  await waitForProxies(client, plan, o.deadline, progress, exec);
  progress.update("kubeadm init phase addon coredns", true);
  await phase("coredns");
  await waitForStack(client, plan, "upstream", o.deadline, progress, exec);
}

import { cidrList, nth } from "@switchyard/basics";
import yaml from "js-yaml";
import { applyOrder } from "../stack/apply.js";
import { type KubeObject, labStack, type ProxyMode } from "../stack/manifests.js";
import { kindEbpfPlaces } from "./ebpf-mounts.js";
import type { KindLabInput } from "./options.js";

/**
 * The apiserver as kind's nodes reach it without a Service: the control-plane container's name on kind's Docker
 * network and kubeadm's port. kubeadm writes the same address into its own kube-proxy kubeconfig (kind's
 * controlPlaneEndpoint), and it is in the apiserver certificate's SANs.
 */
export const kindApiserver = (cluster: string) => `https://${cluster}-control-plane:6443`;

/**
 * The stack for a kind cluster: the netns lab's manifests with the same installer edits (labStack), pointed at
 * the control-plane container, and the proxy given each node's cgroup2 mount and BPF file system in every mode
 * (ebpf-mounts.ts). Nothing else differs: kind installs no kube-proxy (kubeProxyMode none), so ours is the only
 * one, and the kube-dns ClusterIP is the tenth service address, which is what kubeadm gives the kubelets as
 * --cluster-dns.
 */
export function kindStack(
  objects: readonly KubeObject[],
  input: KindLabInput,
  proxyMode: ProxyMode,
): KubeObject[] {
  return applyOrder(
    labStack(objects, {
      proxyMode,
      server: kindApiserver(input.name),
      clusterCidr: input.clusterCidr,
      // kubeadm's --cluster-dns: in the primary family's range, as kube-dns is single-stack.
      dnsIp: nth(cidrList(input.serviceCidr)[0] ?? "", 10),
      ebpf: kindEbpfPlaces,
    }),
  );
}

/**
 * What kubeadm installed that our manifests replace and that must go before they are applied: its CoreDNS
 * Deployment. The Service (kube-dns), ConfigMap (coredns) and RBAC of the same names are applied over kubeadm's:
 * same names and meaning, and a forced server-side apply takes the fields over. The Deployment is deleted rather
 * than applied over because server-side apply merges: fields kubeadm set that our manifest does not (its probe
 * ports, for one) would stay in the pod template, and the pods would not be the ones apps/cluster-dns/deploy
 * describes. kubeadm's pods cannot serve anyway before our kube-proxy runs (they reach the apiserver through
 * the `kubernetes` ClusterIP), so deleting them loses nothing.
 */
export const replacedKubeadmObjects: readonly { kind: string; namespace: string; name: string }[] = [
  { kind: "deployment", namespace: "kube-system", name: "coredns" },
];

/** The manifests as one multi-document YAML file, for `kubectl apply -f`, in apply order. */
export function renderManifests(objects: readonly KubeObject[]): string {
  return objects.map((o) => `---\n${yaml.dump(o, { lineWidth: -1 })}`).join("");
}

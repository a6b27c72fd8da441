/** The control-plane components kubeadm runs as static pods, named `<component>-<node>`. */
const staticPods = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];

/**
 * `switchyard-lab logs <component>` on a kind lab, as kubectl arguments: a control-plane component is its static
 * pod on the control-plane node; anything else is `<namespace>/<pod>[/<container>]`.
 */
export function kindLogsArgs(component: string, cluster: string): string[] {
  if (staticPods.includes(component))
    return ["-n", "kube-system", "logs", `${component}-${cluster}-control-plane`];
  const [ns, pod, container, ...extra] = component.split("/");
  if (!ns || !pod || extra.length > 0)
    throw new Error(
      `logs: on a kind lab name ${staticPods.join(", ")} or <namespace>/<pod>[/<container>], got "${component}"`,
    );
  return ["-n", ns, "logs", pod, ...(container ? ["-c", container] : [])];
}

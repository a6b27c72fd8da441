import type { Pod } from "kubernetes-types/core/v1.js";

/**
 * The kubelet's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go at v1.37.2; every one is namespaced in this
 * kernel): a pod may set these without the node allowing more (--allowed-unsafe-sysctls, which the lab's agent
 * does not take).
 */
const safeSysctls = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
  "net.ipv4.tcp_slow_start_after_idle",
  "net.ipv4.tcp_notsent_lowat",
]);

/** containerd 2's defaults for a pod's own network namespace (enable_unprivileged_ports and _icmp). */
const runtimeDefaults: Record<string, string> = {
  "net.ipv4.ip_unprivileged_port_start": "0",
  "net.ipv4.ping_group_range": "0 2147483647",
};

/**
 * The sysctls for a pod's network namespace, or the kubelet's refusal (its sysctl admit handler: the pod fails
 * with reason SysctlForbidden). The runtime's defaults come first; the pod's own net.* sysctls override them. A
 * `/` in a name is a `.`, as the kubelet reads it. kernel.shm_rmid_forced is admitted but not set: the lab's pods
 * share the host's IPC namespace.
 */
export function podSysctls(pod: Pod): { values: Record<string, string> } | { forbidden: string } {
  const hostNetwork = pod.spec?.hostNetwork === true;
  const values: Record<string, string> = hostNetwork ? {} : { ...runtimeDefaults };
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const name = s.name.replaceAll("/", ".");
    if (!safeSysctls.has(name)) return { forbidden: `forbidden sysctl: "${s.name}" not allowlisted` };
    if (!name.startsWith("net.")) continue;
    if (hostNetwork) return { forbidden: `forbidden sysctl: "${s.name}" not allowed with host net enabled` };
    values[name] = s.value;
  }
  return { values };
}

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { podSysctls } from "../../src/agent/pod-sysctls.js";

const pod = (sysctls: { name: string; value: string }[], hostNetwork = false): Pod => ({
  metadata: { name: "p" },
  spec: { hostNetwork, securityContext: { sysctls }, containers: [] },
});

test("sysctls: containerd's defaults, the pod's safe ones over them, the kubelet's refusals", () => {
  assert.deepEqual(podSysctls(pod([])), {
    values: { "net.ipv4.ip_unprivileged_port_start": "0", "net.ipv4.ping_group_range": "0 2147483647" },
  });
  assert.deepEqual(
    podSysctls(
      pod([
        { name: "net.ipv4.ip_unprivileged_port_start", value: "53" },
        { name: "net/ipv4/ip_local_port_range", value: "40000 40100" },
        { name: "kernel.shm_rmid_forced", value: "1" },
      ]),
    ),
    {
      values: {
        "net.ipv4.ip_unprivileged_port_start": "53",
        "net.ipv4.ping_group_range": "0 2147483647",
        "net.ipv4.ip_local_port_range": "40000 40100",
      },
    },
  );
  assert.deepEqual(podSysctls(pod([{ name: "net.core.somaxconn", value: "1024" }])), {
    forbidden: 'forbidden sysctl: "net.core.somaxconn" not allowlisted',
  });
  assert.deepEqual(podSysctls(pod([{ name: "net.ipv4.tcp_syncookies", value: "1" }], true)), {
    forbidden: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled',
  });
  assert.deepEqual(podSysctls(pod([], true)), { values: {} });
});

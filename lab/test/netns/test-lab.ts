// A lab for an end-to-end test: its own free control-plane ports, agents attached to the test process (they die
// with it), quiet progress. Each test file passes its own prefix and networks so labs never meet.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { HttpRestClient } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane } from "@switchyard/testbed";
import { freeControlPlanePorts } from "@switchyard/testbed/controlplane";
import type { UpstreamBinary } from "@switchyard/testbed/upstream";
import type { Pod } from "kubernetes-types/core/v1.js";
import { labUp } from "../../src/netns/lab-up.js";
import type { LabInput } from "../../src/netns/plan.js";
import type { LabState } from "../../src/netns/state.js";
import { repoRoot } from "../../src/self.js";
import type { ProxyMode, StackKind } from "../../src/stack/manifests.js";

/** Why a test of a lab with the stack cannot run here (not root, apps not built, binaries missing), or undefined. */
export function stackLabSkip(extra: readonly UpstreamBinary[] = []): string | undefined {
  if (process.getuid?.() !== 0) return "the netns runtime needs root (network namespaces, veth, routes)";
  const apps = ["kube-proxy", "slice-controller", "cluster-dns"];
  const unbuilt = apps.filter((a) => !existsSync(join(repoRoot, "apps", a, "dist", "main.js")));
  if (unbuilt.length > 0) return `apps not built (${unbuilt.join(", ")}); run npx turbo run build`;
  return missingControlPlane(["kube-controller-manager", "kube-scheduler", ...extra]);
}

export async function upTestLab(
  stateDir: string,
  lab: Partial<LabInput>,
  options: { stack?: ProxyMode; stackKind?: StackKind; readyTimeoutMs?: number } = {},
): Promise<LabState> {
  return labUp({
    stateDir,
    lab,
    ports: await freeControlPlanePorts(),
    detached: false,
    ...(options.stack ? { stack: options.stack } : {}),
    ...(options.stackKind ? { stackKind: options.stackKind } : {}),
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    out: { write: () => {} },
  });
}

export const sh = (argv: string[]) => execFileSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8" });
export const shIn = (netns: string, argv: string[]) => sh(["ip", "netns", "exec", netns, ...argv]);

/** The network namespaces of a lab's prefix, nodes and pods, as `ip netns list` names them. */
export const labNetns = (prefix: string) =>
  sh(["ip", "netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => n.startsWith(`${prefix}-`));

/**
 * The workload the lab's e2e tests start from, in namespace `ns` (created here, its default ServiceAccount waited
 * for): an echo Deployment of 2 behind a NodePort Service `echo` on TCP 9000 (`service` adds to its spec) and a
 * pause pod `client`, Running. Returns that pod and its network namespace, where the tests run their probes.
 */
export async function echoAndClient(
  client: HttpRestClient,
  prefix: string,
  ns: string,
  service: Record<string, unknown> = {},
): Promise<{ pod: Pod; netns: string }> {
  await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await eventually("the namespace's default ServiceAccount", () =>
    client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`),
  );
  const labels = { app: "echo" };
  await client.call("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
    metadata: { name: "echo" },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "echo", image: "switchyard/echo" }] } },
    },
  });
  await client.call("POST", `/api/v1/namespaces/${ns}/services`, {
    metadata: { name: "echo" },
    spec: {
      type: "NodePort",
      selector: labels,
      ports: [{ port: 9000, targetPort: 9000, protocol: "TCP" }],
      ...service,
    },
  });
  await client.call("POST", `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: "client" },
    spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
  });
  const pod = await eventually("the client pod running", async () => {
    const p = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/client`);
    return p.status?.phase === "Running" ? p : undefined;
  });
  const uid = pod.metadata?.uid?.slice(0, 8) ?? "";
  const netns = labNetns(prefix).find((n) => n.includes("-pod-") && n.endsWith(`-${uid}`)) ?? "";
  if (!netns) throw new Error(`no network namespace for the client pod ${uid}`);
  return { pod, netns };
}

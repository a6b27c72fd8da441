/**
 * The node agent: one process per lab node, playing that node's kubelet. It registers the Node, waits for its
 * pod CIDR, builds the pod bridge, keeps the Lease and Ready condition fresh, and runs the node's pods.
 * Usage: agent/main --state-dir DIR --node NAME [--verbose]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureKubeletServingCert } from "../controlplane/pki.js";
import { adminCredentials, KubeClient } from "../kubeapi/client.js";
import { realExec } from "../netns/exec.js";
import { applySteps } from "../netns/executor.js";
import { Journal } from "../netns/journal.js";
import { type NodePlan, nodeByName } from "../netns/plan.js";
import { labPaths, readLabState } from "../netns/state.js";
import { podBridgeSteps } from "../netns/steps.js";
import { realTeardownDeps, teardown } from "../netns/teardown.js";
import { labEntry, repoRoot } from "../self.js";
import { resolveBinary } from "../upstream/binaries.js";
import { hostBusybox } from "./busybox.js";
import { Ipam } from "./ipam.js";
import { Kubelet, leftoverPodNamespaces } from "./kubelet.js";
import { startKubeletApi } from "./kubelet-api/server.js";
import { Logger } from "./log.js";
import { postNodeStatus, registerNode, startHeartbeat, waitForPodCidr } from "./node-heartbeat.js";
import { kubeletPort } from "./node-object.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { "state-dir": { type: "string" }, node: { type: "string" }, verbose: { type: "boolean" } },
  });
  const dir = values["state-dir"];
  if (!dir || !values.node) throw new Error("usage: agent --state-dir DIR --node NAME");
  const state = readLabState(dir);
  if (!state) throw new Error(`no lab state in ${dir}`);
  const paths = labPaths(dir);
  const node = nodeByName(state.plan, values.node);
  const log = new Logger({ component: "node-agent", node: node.name }, values.verbose ?? false);
  const client = new KubeClient(adminCredentials(state.server, paths.controlPlane));
  const abort = new AbortController();
  const journal = new Journal(paths.journal);

  const deps = { plan: state.plan, node };
  const leftovers = leftoverPodNamespaces(await realExec(["ip", "netns", "list"]), deps);
  if (leftovers.length > 0) {
    log.warn("removing pod sandboxes of a previous agent run", { count: leftovers.length });
    await teardown(
      leftovers.map((name) => ({ kind: "netns" as const, name })),
      realTeardownDeps,
    );
  }

  const registered = await registerNode(client, node);
  await postNodeStatus(client, node, false);
  const podCidr = await waitForPodCidr(client, node, abort.signal);
  const ipam = new Ipam(podCidr);
  const hasBridge = await realExec(["ip", "-n", node.netns, "link", "show", "cbr0"]).then(
    () => true,
    () => false,
  );
  if (!hasBridge) await applySteps(podBridgeSteps(node, podCidr, ipam.gateway), realExec, journal);
  const heartbeat = startHeartbeat(client, node, registered, log);
  log.info("node ready", { podCidr });

  const kubelet = new Kubelet({
    client,
    plan: state.plan,
    node,
    ipam,
    exec: realExec,
    journal,
    podsDir: paths.pods,
    caFile: join(paths.controlPlane, "pki", "ca.crt"),
    // The node's own resolv.conf: the lab's upstream stand-in on the bridge (upstream-dns.ts), never the host's.
    hostResolv: `nameserver ${state.plan.gateway}\n`,
    images: {
      repoRoot,
      echo: labEntry("agent/echo"),
      loadgen: labEntry("agent/loadgen"),
      counter: labEntry("agent/counter"),
      node: process.execPath,
      upstream: (name) => resolveBinary(name).path,
      busybox: hostBusybox,
    },
    log,
  });
  await kubelet.run();
  const api = await serveKubeletApi(paths.controlPlane, node, kubelet, log);

  const shutdown = () => {
    api.close();
    heartbeat.stop();
    kubelet.stop();
    abort.abort();
    client.close();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

/** The kubelet API on the node's IP (logs, the node proxy), with a serving certificate from the lab CA. */
async function serveKubeletApi(controlPlaneDir: string, node: NodePlan, kubelet: Kubelet, log: Logger) {
  const pkiDir = join(controlPlaneDir, "pki");
  const files = await ensureKubeletServingCert(pkiDir, node);
  const tls = {
    cert: readFileSync(files.cert, "utf8"),
    key: readFileSync(files.key, "utf8"),
    ca: readFileSync(join(pkiDir, "ca.crt"), "utf8"),
  };
  const api = await startKubeletApi({
    netns: node.netns,
    ip: node.ip,
    port: kubeletPort,
    tls,
    pods: kubelet,
    log,
  });
  log.info("kubelet API listening", { address: `${node.ip}:${kubeletPort}` });
  return api;
}

main().catch((err: Error) => {
  process.stderr.write(
    `${JSON.stringify({ level: "error", msg: "node agent failed", error: err.message })}\n`,
  );
  process.exit(1);
});

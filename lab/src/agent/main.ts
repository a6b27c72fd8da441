/**
 * The node agent: one process per lab node, playing that node's kubelet. It registers the Node, waits for its
 * pod CIDR, builds the pod bridge, keeps the Lease and Ready condition fresh, and runs the node's pods.
 * Usage: agent/main --state-dir DIR --node NAME [--verbose]
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "@switchyard/kube";
import { adminCredentials, ensureKubeletServingCert, labClient } from "@switchyard/testbed/controlplane";
import { resolveBinary } from "@switchyard/testbed/upstream";
import { realExec } from "../exec.js";
import { labEntry, repoRoot } from "../self.js";
import { hostBusybox } from "./busybox.js";
import { hostProgramInContainerPath } from "./container-path.js";
import {
  applySteps,
  Journal,
  type LabPaths,
  labPaths,
  type NodePlan,
  nodeByName,
  podBridgeSteps,
  readLabState,
  realTeardownDeps,
  teardown,
} from "./host/netns.js";
import { hostPortRuleset } from "./host-ports.js";
import { Ipam } from "./ipam.js";
import { Kubelet } from "./kubelet.js";
import { WebhookAuthorizer } from "./kubelet-api/authorize.js";
import { startKubeletApi } from "./kubelet-api/server.js";
import { ensureLocalhostPair } from "./localhost-pair.js";
import { joinNodeCgroup } from "./node-cgroup.js";
import { postNodeStatus, registerNode, startHeartbeat, waitForPodCidrs } from "./node-heartbeat.js";
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
  joinNodeCgroup(node.cgroup);
  // Warnings and errors only unless verbose: the agent's log file is read when something went wrong.
  const log = new Logger({
    level: values.verbose ? "info" : "warn",
    fields: { component: "node-agent", node: node.name },
  });
  const client = labClient(adminCredentials(state.server, paths.controlPlane));
  const abort = new AbortController();
  const journal = new Journal(paths.journal);

  const registered = await registerNode(client, node);
  await postNodeStatus(client, node, false);
  const podCidrs = await waitForPodCidrs(client, node, abort.signal);
  const ipams = podCidrs.map((cidr) => new Ipam(cidr));
  const hasBridge = await realExec(["ip", "-n", node.netns, "link", "show", "cbr0"]).then(
    () => true,
    () => false,
  );
  const networks = ipams.map((ipam, i) => ({ podCidr: podCidrs[i] ?? "", gateway: ipam.gateway }));
  if (!hasBridge) await applySteps(podBridgeSteps(node, networks), realExec, journal);
  await setUpHostPorts(node);
  const heartbeat = startHeartbeat(client, node, registered, log);
  log.info("node ready", { podCidrs });

  const kubelet = new Kubelet({
    client,
    plan: state.plan,
    node,
    ipams,
    exec: realExec,
    journal,
    podsDir: paths.pods,
    caFile: join(paths.controlPlane, "pki", "ca.crt"),
    // The node's own resolv.conf: the lab's upstream stand-in on the bridge (upstream-dns.ts), never the host's.
    hostResolv: `nameserver ${state.plan.gateway}\n`,
    hostHosts: readFileSync("/etc/hosts", "utf8"),
    images: {
      repoRoot,
      echo: labEntry("agent/echo"),
      loadgen: labEntry("agent/loadgen"),
      counter: labEntry("agent/counter"),
      node: process.execPath,
      upstream: (name) => resolveBinary(name).path,
      busybox: hostBusybox,
      hostProgram: hostProgramInContainerPath,
      porterPair: await ensureLocalhostPair(join(paths.images, "porter")).catch((err: Error) => {
        log.warn("agnhost porter gets no TLS pair", { error: err.message });
        return undefined;
      }),
    },
    layersDir: paths.images,
    log,
  });
  await kubelet.run();
  const authorizer = new WebhookAuthorizer(client, node.name);
  const api = await serveKubeletApi(paths, node, kubelet, authorizer, log);

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

/** The node's hostPort table (host-ports.ts), and loopback sources routed on to pods over the bridge. */
async function setUpHostPorts(node: NodePlan): Promise<void> {
  const inNode = (...argv: string[]) => realExec(["ip", "netns", "exec", node.netns, ...argv]);
  await inNode("nft", hostPortRuleset());
  await inNode("sysctl", "-qw", "net.ipv4.conf.cbr0.route_localnet=1");
}

/**
 * The kubelet API on the node's IP (logs, the node proxy), with a serving certificate from the lab CA, callers
 * authorized with SubjectAccessReviews as a kubelet with --authorization-mode=Webhook does.
 */
async function serveKubeletApi(
  paths: LabPaths,
  node: NodePlan,
  kubelet: Kubelet,
  authorizer: WebhookAuthorizer,
  log: Logger,
) {
  const pkiDir = join(paths.controlPlane, "pki");
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
    logsDir: paths.logs,
    authorizer,
    log,
  });
  log.info("kubelet API listening", { address: `${node.ip}:${kubeletPort}` });
  return api;
}

main().catch((err: Error) => {
  new Logger({ fields: { component: "node-agent" } }).error("node agent failed", { error: err.message });
  process.exit(1);
});

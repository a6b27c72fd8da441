import { familyOf, hostPort } from "@switchyard/basics";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import { realExec } from "../exec.js";
import { explain } from "../explain/explain.js";
import { openLabFor, readableNode } from "../explain/open-lab.js";
import { nodeAddresses, nodeProxyMode, nodeReader } from "../explain/read-node.js";
import {
  type FromSpec,
  isIP,
  nodeFor,
  type Protocol,
  parseFrom,
  parseTo,
  pickServicePort,
  podRangeNode,
  type ServiceAtAddress,
  serviceAt,
  type ToSpec,
} from "../explain/targets.js";
import { labNode, type ScenarioLab, serviceSlices } from "../scenarios/kit/scenario-lab.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { UsageError } from "./usage.js";

interface Client {
  ip: string;
  node?: string;
  words: string;
}

async function resolveClient(lab: ScenarioLab, from: FromSpec): Promise<Client> {
  if (from.kind === "ip") return { ip: from.ip, words: from.ip };
  const pod = await lab.client.call<Pod>("GET", `/api/v1/namespaces/${from.namespace}/pods/${from.name}`);
  const ip = pod.status?.podIP;
  const node = pod.spec?.nodeName;
  if (!ip || !node)
    throw new Error(`pod ${from.namespace}/${from.name} has no IP yet (phase ${pod.status?.phase})`);
  return { ip, node, words: `${ip} (pod ${from.namespace}/${from.name} on ${node})` };
}

interface Destination {
  ip: string;
  port: number;
  protocol: Protocol;
  words: string;
  target?: ServiceAtAddress;
}

async function resolveDestination(
  lab: ScenarioLab,
  to: ToSpec,
  proto: Protocol | undefined,
  nodes: Node[],
): Promise<Destination> {
  if (to.kind === "service") {
    const service = await lab.client.call<Service>(
      "GET",
      `/api/v1/namespaces/${to.namespace}/services/${to.name}`,
    );
    const port = pickServicePort(service, to.port, proto);
    const ip = service.spec?.clusterIP;
    if (!ip || !isIP(ip))
      throw new Error(`Service ${to.namespace}/${to.name} has no ClusterIP (headless?): nothing to trace`);
    const words = `${hostPort(ip, port.port)} (Service ${to.namespace}/${to.name}, port ${port.name || port.port})`;
    return {
      ip,
      port: port.port,
      protocol: (port.protocol ?? "TCP") as Protocol,
      words,
      target: { service, port, entry: "ClusterIP" },
    };
  }
  const protocol = proto ?? "TCP";
  const services = (await lab.client.call<{ items: Service[] }>("GET", "/api/v1/services")).items;
  const nodeIPs = nodes.flatMap((n) => (n.status?.addresses ?? []).map((a) => a.address));
  const found = serviceAt(services, to.ip, to.port, protocol, nodeIPs);
  const words = found
    ? `${hostPort(to.ip, to.port)} (${found.entry} of Service ${found.service.metadata?.namespace}/${found.service.metadata?.name}, port ${found.port.name || found.port.port})`
    : hostPort(to.ip, to.port);
  return { ip: to.ip, port: to.port, protocol, words, ...(found ? { target: found } : {}) };
}

/** A mistake in a flag's value is a usage error (exit 2), said in one line. */
function asUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(`explain: ${(err as Error).message}`);
  }
}

/** `switchyard-lab explain`: one connection through one node's live rules. */
async function runExplain(inv: Invocation): Promise<number> {
  const fromText = inv.string("from");
  const toText = inv.string("to");
  if (!fromText || !toText) throw new UsageError("explain: --from and --to are required");
  const from = asUsage(() => parseFrom(fromText));
  const to = asUsage(() => parseTo(toText));
  // The table has held the value to --proto's choices: tcp or udp.
  const proto = inv.string("proto")?.toUpperCase() as Protocol | undefined;
  const lab = await openLabFor("explain", labDir(inv.string("state-dir")), realExec, process.stderr);
  try {
    const nodes = (await lab.client.call<{ items: Node[] }>("GET", "/api/v1/nodes")).items;
    const client = await resolveClient(lab, from);
    const dest = await resolveDestination(lab, to, proto, nodes);
    const nodeName = nodeFor(nodes, client.ip, client.node, inv.string("node"));
    const node = await readableNode(lab, labNode(lab, nodeName));
    const family = familyOf(dest.ip);
    const reader = await nodeReader(lab.exec, node, await nodeProxyMode(lab.exec, node, family), family);
    const live = await reader.read();
    const addresses = await nodeAddresses(lab.exec, node.run);
    const apiNode = nodes.find((n) => n.metadata?.name === nodeName);
    const t = dest.target;
    const slices = t
      ? await serviceSlices(lab, t.service.metadata?.namespace ?? "", t.service.metadata?.name ?? "")
      : [];
    const { text } = explain({
      live,
      source: reader.source,
      node: { name: nodeName, labels: apiNode?.metadata?.labels ?? {}, addresses },
      packet: {
        sourceIP: client.ip,
        destIP: dest.ip,
        destPort: dest.port,
        protocol: dest.protocol === "UDP" ? "udp" : "tcp",
      },
      from: `${dest.protocol.toLowerCase()} ${client.words}`,
      to: dest.words,
      ...(t ? { target: { ...t, slices } } : {}),
      fromInside:
        client.node !== undefined || addresses.includes(client.ip) || !!podRangeNode(nodes, client.ip),
      onNode:
        (client.node ?? podRangeNode(nodes, client.ip)?.metadata?.name) === nodeName ||
        addresses.includes(client.ip),
    });
    console.log(text);
    return 0;
  } finally {
    lab.close();
  }
}

export const explainCommand: Command = {
  name: "explain",
  group: "Looking inside",
  summary: "walk a connection through a node's live proxy rules: chains, endpoints and chances, and why",
  description:
    "Walks a new connection through one node's live proxy rules, read from that node's kernel (nft list table " +
    "ip kube-proxy, or iptables-save), with the proxier's packet tracers. Prints every chain, map and rule the " +
    "packet meets, the endpoints it can reach with their chances, whether it is masqueraded and by which rule, " +
    "and why, from the API: traffic policies, hints, endpoints (none: REJECT), held against what the rules do.\n\n" +
    "A node whose proxy runs in ebpf mode has maps instead of rules: explain reads the ones its proxy pinned " +
    "(netns lab only: they are on this host's bpffs) and walks the connection through them as the programs do, " +
    "naming each entry it meets (lb4_services 10.96.0.10:53/UDP internal slot 0, the backend's id, the reverse " +
    "NAT index). A client that is a pod of that node or the node itself is balanced by the socket programs at " +
    "connect (the internal scope where the Service has two), any other by the tc program. " +
    "switchyard-lab lb list prints the whole table.",
  synopsis: "--from POD|IP --to SERVICE|IP:PORT [flags]",
  flags: [
    {
      name: "from",
      value: "POD|IP",
      help: "the client: a pod (NAME in default, or NAMESPACE/NAME) or an address (required)",
    },
    {
      name: "to",
      value: "SERVICE|IP:PORT",
      help:
        "a Service (NAME, NAMESPACE/NAME, with :PORT for one of several ports) or an address: a ClusterIP, an " +
        "external or load-balancer IP, a node's IP with a NodePort (required)",
    },
    {
      name: "proto",
      value: "PROTO",
      choices: ["tcp", "udp"],
      default: "the Service port's, else tcp",
      help: "the protocol",
    },
    {
      name: "node",
      value: "NODE",
      default: "the client pod's node, or the node whose address or pod range holds the client IP",
      help: "whose rules to read",
    },
    labStateDirFlag,
  ],
  examples: [
    "# a pod to a Service, both in default",
    "switchyard-lab explain --from client --to echo",
    "# from outside the cluster to a NodePort, through node-1",
    "switchyard-lab explain --from 203.0.113.7 --to 198.18.0.11:30080 --node node-1",
  ],
  run: runExplain,
};

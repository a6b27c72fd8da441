import { echoImage, loadgenImage } from "../agent/images.js";
import { loadgenStatsPort } from "../agent/loadgen-stats.js";
import type { KubeObject } from "../stack/manifests.js";

/** The migration's traffic: echo servers behind a ClusterIP and a NodePort Service, and a client on every node. */
export const trafficNamespace = "switchyard-migration";
export const echoNodePort = 30900;

/**
 * Whose NodePort each client connects to: every node's, or only its own node's. ebpf mode serves NodePorts for
 * the node's own processes only (socket programs; packets from another node would need tc programs, which the
 * proxy does not load yet), so while a node runs it no other node's client may count on its NodePort.
 */
export type NodePortTargets = "every node" | "own node";

/**
 * `replicas` echo servers, and a traffic generator on every node that runs pods, aimed at the echo ClusterIP (by
 * name) and at NodePorts: each node's, or the client's own node's (the pod's `status.hostIP`).
 */
export function trafficObjects(
  replicas: number,
  nodes: readonly { ip: string }[],
  nodePorts: NodePortTargets = "every node",
): KubeObject[] {
  const ns = trafficNamespace;
  const labels = { app: "echo" };
  const echoFqdn = `echo.${ns}.svc.cluster.local`;
  const nodePortHosts = nodePorts === "own node" ? ["$(HOST_IP)"] : nodes.map((n) => n.ip);
  const tcpTargets = [`${echoFqdn}:9000`, ...nodePortHosts.map((ip) => `${ip}:${echoNodePort}`)];
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "echo", namespace: ns },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: "echo",
                image: echoImage,
                imagePullPolicy: "IfNotPresent",
                readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 2 },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: ns },
      spec: { selector: labels, ports: [{ name: "tcp", port: 9000, protocol: "TCP" }] },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo-nodeport", namespace: ns },
      spec: {
        type: "NodePort",
        selector: labels,
        ports: [{ name: "tcp", port: 9000, nodePort: echoNodePort, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "loadgen", namespace: ns },
      spec: {
        selector: { matchLabels: { app: "loadgen" } },
        template: {
          metadata: { labels: { app: "loadgen" } },
          spec: {
            containers: [
              {
                name: "loadgen",
                image: loadgenImage,
                imagePullPolicy: "IfNotPresent",
                env: [{ name: "HOST_IP", valueFrom: { fieldRef: { fieldPath: "status.hostIP" } } }],
                args: [
                  ...tcpTargets.flatMap((t) => ["--tcp", t]),
                  ...["--dns", echoFqdn, "--dns", "kubernetes.default.svc.cluster.local"],
                  ...["--stats-port", String(loadgenStatsPort)],
                ],
                readinessProbe: { tcpSocket: { port: loadgenStatsPort }, periodSeconds: 2 },
              },
            ],
          },
        },
      },
    },
  ];
}

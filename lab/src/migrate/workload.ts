import { echoImage, loadgenImage } from "../agent/images.js";
import { loadgenStatsPort } from "../agent/loadgen-stats.js";
import type { KubeObject } from "../stack/manifests.js";

/** The migration's traffic: echo servers behind a ClusterIP and a NodePort Service, and a client on every node. */
export const trafficNamespace = "switchyard-migration";
export const echoNodePort = 30900;

/** `replicas` echo servers, and a traffic generator on every node that runs pods, aimed at each node's NodePort. */
export function trafficObjects(replicas: number, nodes: readonly { ip: string }[]): KubeObject[] {
  const ns = trafficNamespace;
  const labels = { app: "echo" };
  const echoFqdn = `echo.${ns}.svc.cluster.local`;
  const tcpTargets = [`${echoFqdn}:9000`, ...nodes.map((n) => `${n.ip}:${echoNodePort}`)];
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

import type { LabPlan } from "../netns/plan.js";
import type { KubeObject } from "../stack/manifests.js";

/** The migration's traffic: echo servers behind a ClusterIP and a NodePort Service, and a client on every node. */
export const trafficNamespace = "switchyard-migration";
export const echoNodePort = 30900;
export const loadgenStatsPort = 8080;

export function trafficObjects(plan: LabPlan): KubeObject[] {
  const ns = trafficNamespace;
  const labels = { app: "echo" };
  const echoFqdn = `echo.${ns}.svc.cluster.local`;
  const tcpTargets = [`${echoFqdn}:9000`, ...plan.nodeList.map((n) => `${n.ip}:${echoNodePort}`)];
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "echo", namespace: ns },
      spec: {
        replicas: plan.nodes,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: "echo",
                image: "switchyard/echo",
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
                image: "switchyard/loadgen",
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

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { slimEndpointSlice, slimPod, slimService } from "../../src/plugins/kubernetes/kube/slim.js";

describe("slim cached objects", () => {
  test("a Service keeps what answers read, nothing else", () => {
    const slim = slimService({
      metadata: {
        name: "web",
        namespace: "ns",
        resourceVersion: "7",
        labels: { a: "b" },
        managedFields: [{}],
      },
      spec: {
        type: "ClusterIP",
        clusterIP: "172.30.0.1",
        clusterIPs: ["172.30.0.1"],
        selector: { app: "web" },
        ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }],
      },
      status: { loadBalancer: {} },
    });
    assert.deepEqual(slim, {
      metadata: { name: "web", namespace: "ns", resourceVersion: "7" },
      spec: {
        type: "ClusterIP",
        clusterIP: "172.30.0.1",
        clusterIPs: ["172.30.0.1"],
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      },
    });
  });

  test("an EndpointSlice drops not-ready endpoints and keeps the label and trigger time", () => {
    const slim = slimEndpointSlice({
      metadata: {
        name: "web-1",
        namespace: "ns",
        resourceVersion: "9",
        labels: { "kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "x" },
        annotations: {
          "endpoints.kubernetes.io/last-change-trigger-time": "2024-01-01T00:00:00Z",
          other: "y",
        },
      },
      addressType: "IPv4",
      endpoints: [
        {
          addresses: ["10.0.0.1"],
          hostname: "a",
          nodeName: "n1",
          conditions: { ready: true, serving: true },
          targetRef: { kind: "Pod", name: "p1", uid: "u" },
        },
        { addresses: ["10.0.0.2"], conditions: { ready: false } },
        { addresses: ["10.0.0.3"], targetRef: { name: "x".repeat(64) } },
      ],
      ports: [{ name: "http", port: 80, protocol: "TCP", appProtocol: "http" }],
    });
    assert.deepEqual(slim, {
      addressType: "IPv4",
      metadata: {
        name: "web-1",
        namespace: "ns",
        resourceVersion: "9",
        labels: { "kubernetes.io/service-name": "web" },
        annotations: { "endpoints.kubernetes.io/last-change-trigger-time": "2024-01-01T00:00:00Z" },
      },
      endpoints: [
        { addresses: ["10.0.0.1"], hostname: "a", targetRef: { name: "p1" } },
        { addresses: ["10.0.0.3"] },
      ],
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    });
  });

  test("a terminating Pod keeps no addresses", () => {
    const status = { podIP: "10.0.0.5", podIPs: [{ ip: "10.0.0.5" }], phase: "Running" };
    assert.deepEqual(slimPod({ metadata: { name: "p", namespace: "ns" }, status }), {
      metadata: { name: "p", namespace: "ns" },
      status: { podIP: "10.0.0.5", podIPs: [{ ip: "10.0.0.5" }] },
    });
    assert.deepEqual(
      slimPod({ metadata: { name: "p", namespace: "ns", deletionTimestamp: "now" }, status }),
      {
        metadata: { name: "p", namespace: "ns" },
      },
    );
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import yaml from "js-yaml";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { hostKubeconfig, kindCredentials, kubeconfigServer } from "../../src/kind/kubeconfig.js";
import { kindStatusText } from "../../src/kind/status-text.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

// What kubeadm writes into /etc/kubernetes/admin.conf on the control plane: names of its own, the in-cluster server.
const adminConf = yaml.dump({
  apiVersion: "v1",
  kind: "Config",
  "current-context": "kubernetes-admin@lab",
  contexts: [{ name: "kubernetes-admin@lab", context: { cluster: "lab", user: "kubernetes-admin" } }],
  clusters: [
    {
      name: "lab",
      cluster: { server: "https://lab-control-plane:6443", "certificate-authority-data": b64("CA") },
    },
  ],
  users: [
    {
      name: "kubernetes-admin",
      user: { "client-certificate-data": b64("CERT"), "client-key-data": b64("KEY") },
    },
  ],
});

describe("the host's kubeconfig, from the control plane's admin.conf", () => {
  test("named kind-<cluster> as kind names it, pointing at the published port, credentials kept", () => {
    const text = hostKubeconfig(adminConf, "lab", "https://127.0.0.1:32768");
    const cfg = yaml.load(text) as Record<string, unknown>;
    assert.equal(cfg["current-context"], "kind-lab");
    assert.equal(kubeconfigServer(text), "https://127.0.0.1:32768");
    const c = kindCredentials(text, kubeconfigServer(text));
    assert.deepEqual([c.ca.toString(), c.cert.toString(), c.key.toString()], ["CA", "CERT", "KEY"]);
  });

  test("a kubeconfig without inline credentials (a token user) is a one-line error for the lab's client", () => {
    const text = hostKubeconfig(adminConf, "lab", "https://127.0.0.1:32768");
    assert.throws(() => kindCredentials(text.replace(/client-certificate-data: .*\n/, ""), "https://x"), {
      message:
        "the kind lab's kubeconfig has no inline CA, client certificate and key for its current context",
    });
  });

  test("an admin.conf without a cluster and user for its context is a one-line error", () => {
    assert.throws(
      () => hostKubeconfig(yaml.dump({ contexts: [] }), "lab", "https://127.0.0.1:1"),
      /^Error: the control plane's admin.conf names no cluster and user for its context$/,
    );
  });
});

describe("kind status text", () => {
  test("columns fit the longest node and pod names", () => {
    const node = (name: string): Node => ({
      metadata: { name, labels: { "topology.kubernetes.io/zone": "zone-a" } },
      spec: { podCIDR: "10.244.0.0/24" },
      status: { conditions: [{ type: "Ready", status: "True" }] },
    });
    const pod = (name: string): Pod => ({
      metadata: { namespace: "kube-system", name },
      spec: { nodeName: "n", containers: [] },
      status: { phase: "Running", podIP: "10.244.0.2", conditions: [{ type: "Ready", status: "True" }] },
    });
    const long = "kube-controller-manager-a-very-long-cluster-name-control-plane";
    const { healthy, text } = kindStatusText(
      [],
      [node("a-very-long-cluster-name-control-plane")],
      [pod(long), pod("x")],
    );
    assert.equal(healthy, true);
    const lines = text.split("\n");
    const phaseAt = (l: string) => l.indexOf("Running");
    const rows = lines.filter((l) => l.includes("Running"));
    assert.equal(rows.length, 2);
    assert.equal(phaseAt(rows[0] ?? ""), phaseAt(rows[1] ?? ""), "PHASE in one column");
    assert.ok((rows[0] ?? "").includes(`${long}  Running`), "two spaces after the longest name");
    const header = lines.find((l) => l.startsWith("POD")) ?? "";
    assert.equal(header.indexOf("PHASE"), phaseAt(rows[0] ?? ""));
  });
});

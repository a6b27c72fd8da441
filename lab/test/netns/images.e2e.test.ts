import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import type { Pod } from "kubernetes-types/core/v1.js";
import { hostBusybox } from "../../src/agent/busybox.js";
import { adminCredentials, KubeClient } from "../../src/kubeapi/client.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { resolveBinary } from "../../src/testing.js";
import { stackLabSkip, upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "syi", nodes: 1, zones: 1, nodeCidr: "198.18.24.0/24", clusterCidr: "10.253.0.0/16" };
const skip =
  stackLabSkip(["kubectl", "agnhost"]) ??
  (hostBusybox() ? undefined : "no /bin/busybox on the host (apt-get install busybox-static)");
const ns = "images";
/** The kubernetes Service's ClusterIP: the first address of the lab's Service range (10.96.0.0/16). */
const kubernetesIp = "10.96.0.1";
/**
 * Fully qualified: busybox's nslookup (1.28.4 on, Debian's 1.35 here) sends a name with a dot as it is, without
 * the search list, so `nslookup kubernetes.default` fails in a real cluster too (kubernetes/kubernetes#66924).
 */
const kubernetesName = "kubernetes.default.svc.cluster.local";

const agnhostPod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "netexec" },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [
      {
        name: "agnhost",
        image: "registry.k8s.io/e2e-test-images/agnhost:2.56",
        args: ["netexec", "--http-port=8080"],
      },
    ],
  },
};

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end with `typed` on its stdin, which stays open (kubectl -i copies it to the container). */
function runToEnd(argv: string[], typed = ""): Promise<Finished> {
  const child = spawn(argv[0] ?? "", argv.slice(1));
  child.stdin.write(typed);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the e2e suite's basic images on netns: busybox and agnhost, kubectl run -it", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: KubeClient;
  const kubectlArgv = (...args: string[]) => [
    resolveBinary("kubectl").path ?? "kubectl",
    "--kubeconfig",
    state.kubeconfig,
    "-n",
    ns,
    ...args,
  ];

  /** What went wrong, for an assertion's message: the command's output and every pod of the lab. */
  const why = async (run: Finished) =>
    `${run.stdout}${run.stderr}\n${(await runToEnd(kubectlArgv("get", "pods", "-A", "-o", "wide"))).stdout}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-lab-"));
    state = await upTestLab(dir, lab, { stack: "iptables" });
    console.log(`# lab up in ${state.upSeconds?.toFixed(1)}s`);
    client = new KubeClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, agnhostPod);
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("kubectl run -i --rm busybox -- nslookup kubernetes.default.svc.cluster.local: the ClusterIP", async () => {
    const run = await runToEnd(
      kubectlArgv(
        "run",
        "-i",
        "--rm",
        "lookup",
        "--image=busybox",
        "--restart=Never",
        "--",
        "nslookup",
        kubernetesName,
      ),
    );
    assert.equal(run.code, 0, await why(run));
    assert.match(run.stdout, new RegExp(`Address: ${kubernetesIp.replaceAll(".", "\\.")}\\b`), run.stdout);
  });

  test("kubectl run -it --rm: a shell on a terminal (under script(1)), typed into", async () => {
    const quoted = kubectlArgv("run", "-it", "--rm", "shell", "--image=busybox:1.36", "--restart=Never").map(
      (a) => `'${a.replace(/'/g, `'\\''`)}'`,
    );
    // The image's command is sh; what is typed waits in script's terminal until kubectl has attached.
    const run = await runToEnd(
      ["script", "-q", "-e", "-c", quoted.join(" "), "/dev/null"],
      `tty; nslookup ${kubernetesName}; exit 0\r`,
    );
    assert.equal(run.code, 0, await why(run));
    assert.match(run.stdout, /\/dev\/pts\/\d+\r\n/);
    assert.ok(run.stdout.includes(`Address: ${kubernetesIp}`), run.stdout);
  });

  test("agnhost netexec answers busybox's wget with its hostname", async () => {
    const pod = await eventually("netexec running with an IP", async () => {
      const p = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/netexec`);
      return p.status?.phase === "Running" && p.status.podIP ? p : undefined;
    });
    const url = `http://${pod.status?.podIP}:8080/hostname`;
    const run = await eventually("an answer from netexec", async () => {
      const r = await runToEnd(
        kubectlArgv(
          "run",
          "-i",
          "--rm",
          "fetch",
          "--image=busybox",
          "--restart=Never",
          "--",
          "sh",
          "-c",
          `wget -qO- ${url}`,
        ),
      );
      return r.code === 0 ? r : undefined;
    });
    assert.match(run.stdout, /^netexec/, run.stdout + run.stderr);
  });
});

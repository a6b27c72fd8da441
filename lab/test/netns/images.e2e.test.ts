import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { HttpRestClient } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { resolveBinary } from "@switchyard/testbed";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import { hostBusybox } from "../../src/agent/busybox.js";
import { hostProgramInContainerPath } from "../../src/agent/container-path.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { stackLabSkip, upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "syi", nodes: 1, zones: 1, nodeCidr: "198.18.24.0/24", clusterCidr: "10.253.0.0/16" };
const skip =
  stackLabSkip(["kubectl", "agnhost"]) ??
  (hostBusybox() ? undefined : "no /bin/busybox on the host (apt-get install busybox-static)") ??
  (hostProgramInContainerPath("nginx") ? undefined : "no nginx on the host (apt-get install nginx)") ??
  (hostProgramInContainerPath("nc") ? undefined : "no nc on the host (apt-get install netcat-openbsd)");
const ns = "images";
/** The kubernetes Service's ClusterIP: the first address of the lab's Service range (10.96.0.0/16). */
const kubernetesIp = "10.96.0.1";
/**
 * Fully qualified: busybox's nslookup (1.28.4 on, Debian's 1.35 here) sends a name with a dot as it is, without
 * the search list, so `nslookup kubernetes.default` fails in a real cluster too (kubernetes/kubernetes#66924).
 */
const kubernetesName = "kubernetes.default.svc.cluster.local";

/** A pod of one container that gives up quickly when deleted. */
const onePod = (name: string, container: Container): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { terminationGracePeriodSeconds: 1, containers: [container] },
});
const agnhost = "registry.k8s.io/e2e-test-images/agnhost:2.56";

const agnhostPod = onePod("netexec", {
  name: "agnhost",
  image: agnhost,
  args: ["netexec", "--http-port=8080"],
});

/** nginx as the e2e suite runs it: the image's own command, port 80. */
const nginxPod = onePod("web", {
  name: "nginx",
  image: "registry.k8s.io/e2e-test-images/nginx:1.27.0-2",
  ports: [{ containerPort: 80 }],
});

/** agnhost netexec behind a hostPort on the node's every address (TCP) and one on its address only (UDP). */
const hostPortPod = onePod("exposed", {
  name: "agnhost",
  image: agnhost,
  args: ["netexec", "--http-port=8080", "--udp-port=8081"],
  ports: [
    { containerPort: 8080, hostPort: 54321 },
    { containerPort: 8081, hostPort: 54321, protocol: "UDP", hostIP: "198.18.24.11" },
  ],
});

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

describe("the e2e suite's images on netns: busybox, agnhost, nginx, their own files; kubectl run -it; hostPort", {
  skip,
}, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
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
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, agnhostPod);
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, nginxPod);
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, hostPortPod);
  });

  const running = (name: string) =>
    eventually(`${name} running with an IP`, async () => {
      const p = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/${name}`);
      return p.status?.phase === "Running" && p.status.podIP ? p : undefined;
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

  test("kubectl exec runs agnhost's own programs: its files, a shell, nc as the Services specs call it", async () => {
    const pod = await running("netexec");
    const shell = (script: string) => runToEnd(kubectlArgv("exec", "netexec", "--", "sh", "-c", script));
    const files = await shell("ls -d /agnhost /agnhost-2 /coredns /localhost.crt /uploads");
    assert.equal(
      files.stdout,
      "/agnhost\n/agnhost-2\n/coredns\n/localhost.crt\n/uploads\n",
      await why(files),
    );
    // The Services specs' reachability check: netexec's UDP port answers hostName with the pod's name.
    const udp = await shell(`echo hostName | nc -v -u -w 2 ${pod.status?.podIP} 8081`);
    assert.equal(udp.code, 0, await why(udp));
    assert.equal(udp.stdout, "netexec");
    const suffix = await runToEnd(kubectlArgv("exec", "netexec", "--", "/agnhost", "dns-suffix"));
    assert.match(suffix.stdout, new RegExp(`^${ns}\\.svc\\.cluster\\.local,`), await why(suffix));
  });

  test("what a container writes stays in its own root: the host and the pod's next container never see it", async () => {
    await running("netexec");
    const marker = "/etc/switchyard-images-e2e";
    const wrote = await runToEnd(
      kubectlArgv("exec", "netexec", "--", "sh", "-c", `echo mine >${marker}; cat ${marker}`),
    );
    assert.equal(wrote.stdout, "mine\n", await why(wrote));
    assert.equal(existsSync(marker), false);
    const again = await runToEnd(kubectlArgv("exec", "netexec", "--", "cat", marker));
    assert.equal(again.stdout, "mine\n", "a second exec sees the same root");
  });

  test("nginx serves its page on port 80 and logs the request to the container's output", async () => {
    const pod = await running("web");
    const page = await eventually("nginx's page", async () => {
      const r = await runToEnd(["curl", "-s", "--max-time", "2", `http://${pod.status?.podIP}/`]);
      return r.code === 0 && r.stdout.includes("Welcome to nginx!") ? r.stdout : undefined;
    });
    assert.match(page, /<title>Welcome to nginx!<\/title>/);
    const logs = await eventually("the access log line", async () => {
      const r = await runToEnd(kubectlArgv("logs", "web"));
      return r.stdout.includes('"GET / HTTP/1.1" 200') ? r.stdout : undefined;
    });
    assert.match(logs, /"GET \/ HTTP\/1\.1" 200 .*curl/);
  });

  test("hostPort: the node's address and port lead to the pod (TCP on any address, UDP on one), until it goes", async () => {
    await running("exposed");
    const node = state.plan.nodeList[0];
    assert.ok(node);
    const inNode = (...argv: string[]) => runToEnd(["ip", "netns", "exec", node.netns, ...argv]);
    const get = (url: string) => ["curl", "-s", "--max-time", "2", url];
    const fromNode = await eventually("the hostPort from the node", async () => {
      const r = await inNode(...get(`http://${node.ip}:54321/hostname`));
      return r.code === 0 ? r.stdout : undefined;
    });
    assert.equal(fromNode, "exposed");
    const fromLoopback = await inNode(...get("http://127.0.0.1:54321/hostname"));
    assert.equal(
      fromLoopback.stdout,
      "exposed",
      "any address: the node's loopback too, as portmap routes it",
    );
    const fromOutside = await runToEnd(get(`http://${node.ip}:54321/hostname`));
    assert.equal(fromOutside.stdout, "exposed");
    const udp = await inNode("sh", "-c", `echo hostName | nc -u -w 2 ${node.ip} 54321`);
    assert.equal(udp.stdout, "exposed");
    await client.call("DELETE", `/api/v1/namespaces/${ns}/pods/exposed`);
    await eventually("the pod's hostPorts gone from the node's maps", async () => {
      const maps = await inNode("nft", "list", "table", "ip", "switchyard-hostports");
      return maps.code === 0 && !maps.stdout.includes("54321") ? true : undefined;
    });
  });
});

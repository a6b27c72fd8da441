import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cidrContainsText as contains } from "@switchyard/basics";
import { type HttpRestClient, isNotFound } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane } from "@switchyard/testbed";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { sh, upTestLab } from "./test-lab.js";

// Its own prefix and networks, so a lab brought up by hand on this host is left alone.
const lab = { prefix: "syt", nodes: 2, zones: 2, nodeCidr: "198.18.7.0/24", clusterCidr: "10.250.0.0/16" };
const skip =
  process.getuid?.() !== 0
    ? "the netns runtime needs root (network namespaces, veth, routes)"
    : missingControlPlane(["kube-controller-manager", "kube-scheduler"]);

const podNetns = (pod: Pod) =>
  sh(["ip", "netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .find((n) => n.startsWith(`${lab.prefix}-pod-`) && n.endsWith(`-${pod.metadata?.uid?.slice(0, 8)}`));

const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

describe("netns lab runtime", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  const ns = "lab-e2e";
  const podsPath = `/api/v1/namespaces/${ns}/pods`;
  let echoPods: Pod[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-lab-"));
    state = await upTestLab(dir, lab);
    console.log(`# lab up in ${state.upSeconds?.toFixed(1)}s`);
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.call(`GET`, `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("nodes register Ready, spread over zones, with pod CIDRs, leases and routes", async () => {
    const nodes = await client.call<{ items: Node[] }>("GET", "/api/v1/nodes");
    assert.deepEqual(nodes.items.map((n) => n.metadata?.name).sort(), ["node-1", "node-2"]);
    const zones = nodes.items.map((n) => n.metadata?.labels?.["topology.kubernetes.io/zone"]).sort();
    assert.deepEqual(zones, ["zone-a", "zone-b"]);
    const routes = sh(["ip", "route", "show"]);
    for (const n of nodes.items) {
      const cidr = n.spec?.podCIDR ?? "";
      const ip = n.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? "";
      assert.ok(contains(lab.clusterCidr, cidr.split("/")[0] ?? ""), cidr);
      assert.equal(n.status?.allocatable?.cpu, "2");
      assert.ok(routes.includes(`${cidr} via ${ip} dev syt-lab0`), `root route to ${cidr}`);
      await client.call(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${n.metadata?.name}`,
      );
    }
    const endpoints = await client.call<{ subsets?: Array<{ addresses?: Array<{ ip: string }> }> }>(
      "GET",
      "/api/v1/namespaces/default/endpoints/kubernetes",
    );
    assert.equal(endpoints.subsets?.[0]?.addresses?.[0]?.ip, "198.18.7.1");
  });

  test("an echo Deployment and a pause pod run Ready with addresses from their node's pod CIDR", async () => {
    await client.call("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: "echo" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "echo" } },
        template: {
          metadata: { labels: { app: "echo" } },
          spec: {
            // One per node, so the connection below crosses nodes.
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "echo" } } },
                ],
              },
            },
            containers: [
              {
                name: "echo",
                image: "switchyard/echo:0.1.0",
                args: ["--lameduck-ms=3000"],
                readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    });
    await client.call("POST", podsPath, {
      metadata: { name: "pause" },
      spec: { containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10" }] },
    });
    const nodes = await client.call<{ items: Node[] }>("GET", "/api/v1/nodes");
    const cidrOf = (name: string | undefined) =>
      nodes.items.find((n) => n.metadata?.name === name)?.spec?.podCIDR ?? "";
    const pods = await eventually("3 pods Running and Ready", async () => {
      const list = await client.call<{ items: Pod[] }>("GET", podsPath);
      const ok = list.items.filter((p) => p.status?.phase === "Running" && isReady(p));
      return ok.length === 3 ? list.items : undefined;
    });
    for (const p of pods) {
      assert.ok(
        contains(cidrOf(p.spec?.nodeName), p.status?.podIP ?? ""),
        `${p.metadata?.name} ${p.status?.podIP}`,
      );
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0);
    }
    echoPods = pods.filter((p) => p.metadata?.labels?.app === "echo");
    assert.notEqual(echoPods[0]?.spec?.nodeName, echoPods[1]?.spec?.nodeName);
  });

  test("a pod reaches the other node's pod and gets its name back, with its own address as the peer", () => {
    const [a, b] = echoPods;
    assert.ok(a && b);
    const from = podNetns(a);
    assert.ok(from, "pod a's namespace");
    const reply = sh([
      "ip",
      "netns",
      "exec",
      from,
      "curl",
      "-s",
      "-m",
      "5",
      `http://${b.status?.podIP}:8080/`,
    ]);
    assert.match(reply, new RegExp(`^${b.metadata?.name} (::ffff:)?${a.status?.podIP}:\\d+`));
  });

  test("a pod sees cluster DNS, its service-account token and the apiserver's variables", async () => {
    const [a] = echoPods;
    const pid =
      sh(["ip", "netns", "pids", podNetns(a as Pod) ?? ""])
        .trim()
        .split("\n")[0] ?? "";
    const inPod = (cmd: string) => sh(["nsenter", "-t", pid, "-m", "-u", "-n", "sh", "-c", cmd]);
    assert.equal(inPod("hostname").trim(), a?.metadata?.name);
    assert.equal(
      inPod("cat /etc/resolv.conf"),
      `nameserver 10.96.0.10\nsearch ${ns}.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`,
    );
    assert.equal(inPod("cat /var/run/secrets/kubernetes.io/serviceaccount/namespace"), ns);
    const token = inPod("cat /var/run/secrets/kubernetes.io/serviceaccount/token");
    const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    assert.ok(env.includes("KUBERNETES_SERVICE_HOST=10.96.0.1"));
    assert.ok(env.includes("KUBERNETES_SERVICE_PORT=443"));
    // The apiserver accepts the token as the pod's ServiceAccount.
    const review = sh([
      "curl",
      "-s",
      "--cacert",
      join(labPaths(dir).controlPlane, "pki", "ca.crt"),
      "-H",
      `Authorization: Bearer ${token}`,
      "-H",
      "Content-Type: application/json",
      "-X",
      "POST",
      "-d",
      '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
      `${state.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    ]);
    assert.equal(JSON.parse(review).status.userInfo.username, `system:serviceaccount:${ns}:default`);
  });

  test("an unknown image leaves the pod Pending with a clear message", async () => {
    await client.call("POST", podsPath, {
      metadata: { name: "unknown" },
      spec: { containers: [{ name: "web", image: "httpd:2.4" }] },
    });
    const waiting = await eventually("the pod's waiting reason", async () => {
      const p = await client.call<Pod>("GET", `${podsPath}/unknown`);
      return p.status?.containerStatuses?.[0]?.state?.waiting;
    });
    assert.equal(waiting.reason, "ErrImagePull");
    assert.equal(waiting.message, "image httpd:2.4 is not known to the switchyard lab runtime");
    const p = await client.call<Pod>("GET", `${podsPath}/unknown`);
    assert.equal(p.status?.phase, "Pending");
  });

  test("a crashed container is restarted and counted", async () => {
    const pod = echoPods[1] as Pod;
    const pid = Number(
      sh(["ip", "netns", "pids", podNetns(pod) ?? ""])
        .trim()
        .split("\n")[0],
    );
    process.kill(pid, "SIGKILL");
    const restarted = await eventually("restartCount 1 and Ready again", async () => {
      const p = await client.call<Pod>("GET", `${podsPath}/${pod.metadata?.name}`);
      return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && isReady(p) ? p : undefined;
    });
    assert.equal(restarted.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode, 137);
  });

  test("deleting a pod terminates it gracefully, removes its sandbox, then the object", async () => {
    const pod = echoPods[0] as Pod;
    const netns = podNetns(pod) ?? "";
    await client.call("DELETE", `${podsPath}/${pod.metadata?.name}`, { gracePeriodSeconds: 30 });
    // The echo server drains for 3 s after SIGTERM: meanwhile the object waits with a deletionTimestamp.
    const terminating = await client.call<Pod>("GET", `${podsPath}/${pod.metadata?.name}`);
    assert.ok(terminating.metadata?.deletionTimestamp);
    assert.ok(
      sh(["ip", "netns", "pids", netns]).trim().length > 0,
      "process still serving while terminating",
    );
    await eventually("the pod object gone", async () =>
      client.call("GET", `${podsPath}/${pod.metadata?.name}`).then(
        () => undefined,
        (err) => (isNotFound(err) ? true : undefined),
      ),
    );
    assert.ok(!sh(["ip", "netns", "list"]).includes(netns), "sandbox removed");
  });

  test("down removes every namespace, link, route and process it created", async () => {
    const agents = state.agents.map((a) => a.pid);
    const podProcesses = sh(["ip", "netns", "list"])
      .split("\n")
      .map((l) => l.split(" ")[0] ?? "")
      .filter((n) => n.startsWith(`${lab.prefix}-pod-`))
      .flatMap((n) => sh(["ip", "netns", "pids", n]).trim().split("\n").filter(Boolean).map(Number));
    assert.ok(podProcesses.length > 0, "the remaining echo pod's process");
    await labDown(dir);
    assert.ok(!sh(["ip", "netns", "list"]).includes(`${lab.prefix}-`));
    assert.ok(!sh(["ip", "-o", "link", "show"]).includes(`${lab.prefix}-`));
    assert.ok(!sh(["ip", "route", "show"]).includes("10.250."));
    for (const pid of [...agents, ...podProcesses])
      assert.ok(!existsSync(`/proc/${pid}/cmdline`) || isZombie(pid), `agent ${pid}`);
    const leftovers = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir);
        } catch {
          return false;
        }
      });
    assert.deepEqual(leftovers, []);
    assert.ok(!existsSync(dir));
  });
});

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

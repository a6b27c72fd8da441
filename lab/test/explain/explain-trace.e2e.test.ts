// explain and trace on a real netns lab in nftables mode: a client pod, a three-pod Service, the rules read
// from each node's kernel; trace scales the Deployment and follows the change to every node, then follows a
// change the test makes itself (--watch).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type HttpRestClient, realClock, sleep } from "@switchyard/kube";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import { echoImage } from "../../src/agent/images.js";
import { main } from "../../src/cli/main.js";
import { realExec } from "../../src/exec.js";
import { labDown } from "../../src/netns/lab-down.js";
import { openLab, type ScenarioLab } from "../../src/scenarios/kit/scenario-lab.js";
import {
  clusterIpService,
  deployment,
  namespace,
  namespaceReady,
  podsOf,
  rolledOut,
} from "../../src/scenarios/kit/workloads.js";
import { applyObjects } from "../../src/stack/apply.js";
import { stackLabSkip, upTestLab } from "../netns/test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const labInput = {
  prefix: "sye",
  nodes: 3,
  zones: 2,
  nodeCidr: "198.18.32.0/24",
  clusterCidr: "10.248.0.0/16",
};
const skip = stackLabSkip();
const ns = "explain";

/** Runs switchyard-lab in this process, returning its exit code and what it printed on stdout (also echoed as TAP comments). */
async function captured(run: () => Promise<number>): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    const code = await run();
    return { code, out: lines.join("\n") };
  } finally {
    console.log = log;
    for (const l of lines.join("\n").split("\n")) log(`# ${l}`);
  }
}

/** Resolves when stderr shows `text` (a command's progress line). */
function stderrShows(text: string): Promise<void> {
  return new Promise((resolve) => {
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      if (String(chunk).includes(text)) {
        process.stderr.write = write;
        resolve();
      }
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
  });
}

describe("explain and trace on a netns lab", { skip }, () => {
  let dir = "";
  let lab: ScenarioLab;
  let client: HttpRestClient;
  let echoIPs: string[] = [];
  let clientPod = "";

  const scale = (replicas: number) =>
    client.call(
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/deployments/echo/scale`,
      { spec: { replicas } },
      "application/merge-patch+json",
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-explain-"));
    await upTestLab(dir, labInput, { stack: "nftables", readyTimeoutMs: 240_000 });
    lab = await openLab(
      { stateDir: dir, params: new Map(), out: { write: () => {} }, exec: realExec },
      "test",
    );
    client = lab.client;
    await applyObjects(client, [namespace(ns)]);
    await lab.until("the namespace", () => namespaceReady(client, ns));
    await applyObjects(client, [
      deployment(ns, "echo", 3, echoImage),
      clusterIpService(ns, "echo", "echo"),
      deployment(ns, "client", 1, lab.images.pause),
    ]);
    await lab.until("echo", () => rolledOut(client, ns, "echo"));
    await lab.until("client", () => rolledOut(client, ns, "client"));
    echoIPs = (await podsOf(client, ns, "app=echo")).map((p: Pod) => p.status?.podIP ?? "").sort();
    clientPod = (await podsOf(client, ns, "app=client"))[0]?.metadata?.name ?? "";
  });

  after(async () => {
    lab?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("explain: the client pod's connection to the Service through its node's nftables", async () => {
    const args = ["explain", "--from", `${ns}/${clientPod}`, "--to", `${ns}/echo`, "--state-dir", dir];
    // The proxies program the Service a moment after its endpoints are ready: until then the rules lag the slices.
    let r = await captured(() => main(args));
    for (let i = 0; i < 30 && !/the rules agree/.test(r.out); i++) {
      await sleep(realClock, 1000);
      r = await captured(() => main(args));
    }
    assert.equal(r.code, 0);
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const ip = svc.spec?.clusterIP ?? "";
    assert.match(r.out, /^rules: {3}node-\d's kernel, nftables mode \(nft list table ip kube-proxy\)$/m);
    assert.match(r.out, /nat-prerouting: jump services/);
    assert.match(
      r.out,
      new RegExp(
        `@service-ips: ${ip.replaceAll(".", "\\.")} \\. tcp \\. 9000 : goto service-\\w+-${ns}/echo/tcp/tcp`,
      ),
    );
    assert.match(r.out, /then one of 3 ways, chosen at random per connection/);
    const reached = [...r.out.matchAll(/^ {2}(\S+):9000 +33\.3% {2}pod explain\/echo-\S+ on node-\d/gm)].map(
      (m) => m[1],
    );
    assert.deepEqual(reached.sort(), echoIPs);
    assert.match(r.out, /masquerade: no/);
    assert.match(r.out, /hints: none, so every ready endpoint is used/);
    assert.match(r.out, /the rules agree with the EndpointSlices/);
    assert.doesNotMatch(r.out, /not read or not followed/);
  });

  test("explain: from outside the cluster, through node-2, masqueraded", async () => {
    const args = ["--from", "203.0.113.7", "--to", `${ns}/echo`, "--node", "node-2", "--state-dir", dir];
    const r = await captured(() => main(["explain", ...args]));
    assert.equal(r.code, 0);
    assert.match(r.out, /^rules: {3}node-2's kernel/m);
    assert.match(
      r.out,
      /masquerade: yes .*\n {2}services: ip daddr @cluster-ips ip saddr != 10\.248\.0\.0\/16 mark set mark or 0x00004000/,
    );
  });

  test("trace: scaling up and back, followed to every node", async () => {
    const r = await captured(() => main(["trace", `${ns}/echo`, "--changes", "2", "--state-dir", dir]));
    assert.equal(r.code, 0);
    const nodes = lab.nodes.map((n) => n.name);
    const [added = "", removed = ""] = r.out.split(/\n(?=change 2 of 2)/);
    assert.match(
      added,
      /^change 1 of 2: \S+ added \(pod explain\/echo-\S+\), scaled Deployment explain\/echo 3 → 4$/m,
    );
    assert.match(
      added,
      /\+\d+\.\d{3} s {2}EndpointSlice echo-\S+ written: resourceVersion \d+, last-change-trigger-time \S+Z/,
    );
    assert.match(
      removed,
      /^change 2 of 2: \S+ removed \(pod explain\/echo-\S+\), scaled Deployment explain\/echo 4 → 3$/m,
    );
    assert.match(removed, /\+0\.000 s {2}pod explain\/echo-\S+ deleted, seen /);
    for (const n of nodes) {
      assert.match(added, new RegExp(`\\+\\d+\\.\\d{3} s {2}${n}: rules send the ClusterIP to it`));
      assert.match(
        removed,
        new RegExp(`\\+\\d+\\.\\d{3} s {2}${n}: rules no longer send the ClusterIP to it`),
      );
      assert.match(r.out, new RegExp(`^ {2}${n} +2/2 +\\d+\\.\\d{3} s / \\d+\\.\\d{3} s`, "m"));
    }
    assert.match(r.out, /^last 2 changes, p50 \/ p99 per node:$/m);
    // trace leaves the replicas as it found them.
    await lab.until("echo back at 3", () => rolledOut(client, ns, "echo"));
    assert.equal((await podsOf(client, ns, "app=echo")).length, 3);
  });

  test("trace --watch: a scale made by someone else", async () => {
    const watching = stderrShows("watching explain/echo");
    const run = captured(() =>
      main(["trace", `${ns}/echo`, "--watch", "--changes", "1", "--timeout", "120", "--state-dir", dir]),
    );
    await watching;
    await scale(4);
    const r = await run;
    assert.equal(r.code, 0);
    assert.match(r.out, /^change 1 of 1: \S+ added \(pod explain\/echo-\S+\), seen on the watch$/m);
    for (const n of lab.nodes) assert.match(r.out, new RegExp(`${n.name}: rules send the ClusterIP to it`));
    await scale(3);
  });
});

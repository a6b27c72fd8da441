import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { kindDown } from "../../src/kind/lab-down.js";
import { kindStatus } from "../../src/kind/lab-status.js";
import { kindLabUp } from "../../src/kind/lab-up.js";
import { kindToolsOnThisMachine } from "../../src/kind/machine-tools.js";
import type { KindLabState } from "../../src/kind/state.js";
import type { KindTools } from "../../src/kind/tools.js";
import { docker, dockerEngine } from "../../src/testing/docker.js";
import { kindKubectl, runProbe } from "./kind-kubectl.js";

// A real kind cluster on this machine's engine: the node image made locally where none can be pulled, our
// images built and loaded, the stack applied. Two workers keep it inside two cores.
const engine = dockerEngine();
const name = "sy-e2e";
const probeImage = "switchyard/cluster-dns:0.1.0";

// A pod from one of our images (it has node): a lookup through the pod's resolv.conf (kube-dns, our DNS, reached
// through our proxy) and a TCP connect to the `kubernetes` ClusterIP. Prints one JSON line.
const probeScript = `
const dns = require("node:dns").promises, net = require("node:net");
const connect = (host, port) => new Promise((ok) => {
  const s = net.connect({ host, port, timeout: 3000 }, () => { s.destroy(); ok("connected"); });
  s.on("error", (e) => ok(e.code)); s.on("timeout", () => { s.destroy(); ok("timeout"); });
});
(async () => {
  const a = await dns.resolve4("kubernetes.default.svc.cluster.local").catch((e) => e.code);
  console.log(JSON.stringify({ lookup: a, clusterIp: await connect("10.96.0.1", 443) }));
})();`;

describe("kind runtime: a real cluster on this machine's Docker engine", { skip: engine.skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-kind-e2e-"));
  let state: KindLabState;
  let tools: KindTools;
  let kubectl: (...args: string[]) => string;

  before(async () => {
    Object.assign(process.env, engine.env);
    tools = await kindToolsOnThisMachine(process.stderr);
    // A cluster of an earlier run that did not get to `down`.
    spawnSync(tools.kind, ["delete", "cluster", "--name", name], { env: engine.env, stdio: "ignore" });
    state = await kindLabUp({
      stateDir: dir,
      input: { name, nodes: 2, zones: 2 },
      stack: "iptables",
      timeoutSeconds: 600,
    });
    kubectl = kindKubectl(tools, state, engine.env);
    console.log(
      `# kind up: nodes in ${state.nodesSeconds?.toFixed(1)} s, stack in ${state.stack?.seconds.toFixed(1)} s, ${state.upSeconds?.toFixed(1)} s in all (node image ${state.input.nodeImage})`,
    );
  });

  after(async () => {
    await kindDown(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("status: the control-plane node and two workers Ready, the stack's pods Running", async () => {
    const status = await kindStatus(dir, { tools });
    assert.ok(status.healthy, status.text);
    const nodes = JSON.parse(kubectl("get", "nodes", "-o", "json")) as {
      items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[];
    };
    assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), [
      `${name}-control-plane`,
      `${name}-worker`,
      `${name}-worker2`,
    ]);
    for (const n of nodes.items)
      assert.ok(
        n.status.conditions.some((c) => c.type === "Ready" && c.status === "True"),
        `${n.metadata.name} Ready`,
      );
    const labels = docker(engine, [
      ...["ps", "--filter", `label=io.x-k8s.kind.cluster=${name}`],
      ...["--format", '{{.Names}} {{.Label "io.x-k8s.kind.role"}}'],
    ]);
    assert.match(labels, new RegExp(`${name}-worker2 worker`));
  });

  test("a pod resolves kubernetes.default through kube-dns and connects to the kubernetes ClusterIP", () => {
    const result = runProbe(kubectl, "probe", probeImage, probeScript);
    assert.deepEqual(result, { lookup: ["10.96.0.1"], clusterIp: "connected" });
  });

  test("down removes every container and network of the cluster", async () => {
    await kindDown(dir);
    const left = docker(engine, ["ps", "-a", "--filter", `label=io.x-k8s.kind.cluster=${name}`, "-q"]);
    assert.equal(left, "", "no node container left");
  });
});

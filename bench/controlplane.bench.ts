// How long the lab's control plane takes to start (etcd, kube-apiserver to /readyz, controller-manager and
// scheduler to /healthz), and how long a warm `upstream build` takes when every binary is cached.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { down, freePort, up } from "@switchyard/testbed/controlplane";
import { readVersions } from "@switchyard/testbed/upstream";
import { machineLine, median } from "./machine.js";

const runs = Number(process.argv[2] ?? 5);
const full: number[] = [];
const bare: number[] = [];
for (let i = 0; i < runs; i++) {
  for (const [withControllers, into] of [
    [true, full],
    [false, bare],
  ] as const) {
    const stateDir = mkdtempSync(join(tmpdir(), "sy-bench-cp-"));
    const ports = {
      apiserver: await freePort(),
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
    };
    const started = performance.now();
    await up({
      stateDir,
      ports,
      controllerManager: withControllers,
      scheduler: withControllers,
      detached: false,
      out: { write: () => {} },
    });
    into.push((performance.now() - started) / 1000);
    await down(stateDir);
  }
  process.stderr.write(`[bench controlplane] run ${i + 1}/${runs}\n`);
}
const warmStarted = performance.now();
execFileSync(process.execPath, ["lab/bin/switchyard-lab.js", "upstream", "build"], { stdio: "ignore" });
const warmBuild = (performance.now() - warmStarted) / 1000;

const fmt = (xs: number[]) =>
  `${median(xs).toFixed(2)} s (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)})`;
const table = [
  `# Control plane start (${new Date().toISOString().slice(0, 10)})`,
  "",
  `Machine: ${machineLine()}`,
  `Kubernetes ${readVersions().kubernetes}, etcd ${readVersions().etcd}; ${runs} runs each, median.`,
  "",
  "| what | time |",
  "|---|---|",
  `| etcd + kube-apiserver to /readyz (test suites) | ${fmt(bare)} |`,
  `| + controller-manager and scheduler healthy (\`controlplane up\`) | ${fmt(full)} |`,
  `| \`upstream build\` with every binary cached | ${warmBuild.toFixed(2)} s |`,
  "",
].join("\n");
console.log(table);
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/controlplane.md", table);

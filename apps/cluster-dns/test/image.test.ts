// The switchyard/cluster-dns image on a real Docker engine, under the container settings of kubeadm
// v1.37.2's CoreDNS Deployment (cmd/kubeadm/app/phases/addons/dns/manifests.go): the image's own user,
// capabilities drop ALL / add NET_BIND_SERVICE, allowPrivilegeEscalation: false (no-new-privileges),
// readOnlyRootFilesystem, memory limit 170Mi, args -conf /etc/coredns/Corefile with
// the Corefile mounted read-only. The Corefile is kubeadm's without the kubernetes plugin (wiring the image
// to a control plane is later work): `forward` goes to an upstream this test runs, so an answer proves the
// whole path. The requests (cpu 100m, memory 70Mi) are left out: as cgroup v1 cpu.shares against the host's
// other processes, rather than against other pods, 100m starved the server's start on a busy CI machine.
// Skips only when no engine can be had (not root and `docker info` fails), with that reason.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import * as dgram from "node:dgram";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { eventually } from "@switchyard/kube/testing";
import {
  bridgeGateway,
  buildImage,
  dockerEngine,
  docker as dockerIn,
  removeContainers,
} from "@switchyard/testbed";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const image = "switchyard/cluster-dns:dev";
const upstreamName = "upstream.switchyard.test";
const upstreamAddress = "192.0.2.53";

const engine = dockerEngine();
const docker = (args: string[]) => dockerIn(engine, args);

// The upstream's reply to `msg`: A `upstreamName` -> `upstreamAddress`, NXDOMAIN to anything else.
function reply(msg: Buffer): Buffer | undefined {
  if (msg.length < 12) return undefined;
  let end = 12;
  while (end < msg.length && msg[end] !== 0) end += (msg[end] ?? 0) + 1;
  if (end + 5 > msg.length) return undefined;
  const wanted = Buffer.concat(
    upstreamName.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
  );
  const answer = msg.subarray(12, end).equals(wanted) && msg.readUInt16BE(end + 1) === 1;
  const header = Buffer.from(msg.subarray(0, 12));
  header[2] = 0x81; // QR, RD
  header[3] = answer ? 0x80 : 0x83; // RA; NOERROR or NXDOMAIN
  header.writeUInt16BE(answer ? 1 : 0, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  const rr = Buffer.from([
    0xc0,
    0x0c,
    0,
    1,
    0,
    1,
    0,
    0,
    0,
    60,
    0,
    4,
    ...upstreamAddress.split(".").map(Number),
  ]);
  return Buffer.concat([header, msg.subarray(12, end + 5), answer ? rr : Buffer.alloc(0)]);
}

// The upstream on UDP and TCP on one port of every host address (forward asks over the client's protocol).
async function upstream(): Promise<{ port: number; close(): void }> {
  const udp = dgram.createSocket("udp4");
  udp.on("message", (msg, rinfo) => {
    const out = reply(msg);
    if (out) udp.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => udp.bind(0, "0.0.0.0", r));
  const port = udp.address().port;
  const tcp = net.createServer((conn) => {
    let buffered = Buffer.alloc(0);
    conn.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const out = reply(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
        buffered = buffered.subarray(2 + buffered.readUInt16BE(0));
        if (out) conn.write(Buffer.concat([Buffer.from([out.length >> 8, out.length & 0xff]), out]));
      }
    });
    conn.on("error", () => {});
  });
  await new Promise<void>((r) => tcp.listen(port, "0.0.0.0", r));
  return {
    port,
    close: () => {
      udp.close();
      tcp.close();
    },
  };
}

// Asynchronous on purpose: the upstream answers from this process's event loop, which spawnSync would block.
async function dig(server: string, name: string, tcp: boolean): Promise<string> {
  const args = [`@${server}`, name, "A", "+time=2", "+tries=2", ...(tcp ? ["+tcp"] : [])];
  return (await promisify(execFile)("dig", args, { encoding: "utf8" })).stdout;
}

describe("switchyard/cluster-dns image under kubeadm's CoreDNS settings", { skip: engine.skip }, () => {
  const name = `sy-cluster-dns-test-${process.pid}`;
  let dir = "";
  let address = "";
  let stub: { port: number; close(): void } | undefined;

  before(async () => {
    // Builds (or, when nothing changed, finds in the engine's cache) the image from apps/cluster-dns/Dockerfile.
    buildImage(engine, "cluster-dns");
    stub = await upstream();
    const gateway = bridgeGateway(engine);
    dir = mkdtempSync(join(tmpdir(), "sy-dns-image-"));
    chmodSync(dir, 0o755);
    const corefile = readFileSync(join(root, "apps", "cluster-dns", "test", "image.Corefile"), "utf8");
    writeFileSync(join(dir, "Corefile"), corefile.replace("UPSTREAM", `${gateway}:${stub.port}`), {
      mode: 0o644,
    });
    removeContainers(engine, [name]);
    docker([
      "run",
      "-d",
      "--name",
      name,
      "--cap-drop",
      "ALL",
      "--cap-add",
      "NET_BIND_SERVICE",
      "--security-opt",
      "no-new-privileges",
      "--read-only",
      "--memory",
      "170m",
      "-v",
      `${dir}:/etc/coredns:ro`,
      image,
      "-conf",
      "/etc/coredns/Corefile",
    ]);
    address = docker(["inspect", "--format", "{{.NetworkSettings.IPAddress}}", name]);
    await eventually(
      `/ready on ${address}:8181 (logs: docker logs ${name})`,
      async () => (await fetch(`http://${address}:8181/ready`).catch(() => null))?.status === 200,
      { timeoutMs: 90_000 },
    );
  });

  after(() => {
    removeContainers(engine, [name]);
    stub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("runs as uid 65532 with no-new-privileges and a read-only root", () => {
    const pid = docker(["inspect", "--format", "{{.State.Pid}}", name]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    assert.match(status, /^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    assert.equal(docker(["inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", name]), "true");
    assert.equal(docker(["inspect", "--format", "{{.HostConfig.Memory}}", name]), String(170 * 1024 * 1024));
  });

  test("answers on :53 over UDP and TCP through forward", async () => {
    for (const tcp of [false, true]) {
      const out = await dig(address, upstreamName, tcp);
      assert.match(out, /status: NOERROR/, `${tcp ? "TCP" : "UDP"}:\n${out}`);
      assert.match(out, new RegExp(`^${upstreamName}\\.\\s+\\d+\\s+IN\\s+A\\s+${upstreamAddress}$`, "m"));
      assert.match(out, new RegExp(`SERVER: ${address.replaceAll(".", "\\.")}#53\\(`));
      assert.match(await dig(address, "missing.switchyard.test", tcp), /status: NXDOMAIN/);
    }
  });

  test("-workers auto in the image: one process under 170m, a worker per CPU under 256m, one under --cpus 1", async () => {
    const children = (container: string) => {
      const pid = docker(["inspect", "--format", "{{.State.Pid}}", container]);
      return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)
        .length;
    };
    // kubeadm's 170Mi holds the primary (32 MiB) and one worker's 80 MiB, not two: one process, no primary.
    assert.equal(children(name), 0, "kubeadm's limits: one process");
    const cpus = availableParallelism();
    for (const [suffix, flags, workers] of [
      ["256m", ["--memory", "256m"], cpus > 1 ? Math.min(cpus, 2) : 0],
      ["cpus1", ["--memory", "256m", "--cpus", "1"], 0],
    ] as const) {
      const container = `${name}-${suffix}`;
      try {
        docker([
          "run",
          "-d",
          "--name",
          container,
          ...flags,
          "-v",
          `${dir}:/etc/coredns:ro`,
          image,
          "-conf",
          "/etc/coredns/Corefile",
        ]);
        const ip = docker(["inspect", "--format", "{{.NetworkSettings.IPAddress}}", container]);
        await eventually(
          `/ready on ${ip}:8181 (logs: docker logs ${container})`,
          async () => (await fetch(`http://${ip}:8181/ready`).catch(() => null))?.status === 200,
          { timeoutMs: 60_000 },
        );
        assert.equal(children(container), workers, `worker processes with ${flags.join(" ")}`);
        assert.match(await dig(ip, upstreamName, false), /status: NOERROR/);
      } finally {
        removeContainers(engine, [container]);
      }
    }
  });

  test("/health on 8080, /ready on 8181 and metrics on 9153 answer", async () => {
    assert.equal((await fetch(`http://${address}:8080/health`)).status, 200);
    assert.equal((await fetch(`http://${address}:8181/ready`)).status, 200);
    const metrics = await (await fetch(`http://${address}:9153/metrics`)).text();
    assert.match(metrics, /^coredns_dns_requests_total\{/m);
  });

  // What makes :53 work where the runtime does not lower ip_unprivileged_port_start as Docker does: the file
  // capability on the image's node (docs/images.md, "cluster-dns and port 53").
  test("node's file capability binds :53 with the port floor at 1024, and needs NET_BIND_SERVICE", () => {
    const bind53 =
      'require("dgram").createSocket("udp4").on("error", (e) => { console.log(e.code); process.exit(0) })' +
      '.bind(53, () => { console.log("bound"); process.exit(0) })';
    const run = (caps: string[]) =>
      spawnSync(
        "docker",
        [
          "run",
          "--rm",
          "--cap-drop",
          "ALL",
          ...caps,
          "--sysctl",
          "net.ipv4.ip_unprivileged_port_start=1024",
          "--entrypoint",
          "/nodejs/bin/node",
          image,
          "-e",
          bind53,
        ],
        { env: engine.env, encoding: "utf8" },
      );
    const withCap = run(["--cap-add", "NET_BIND_SERVICE"]);
    assert.equal(withCap.stdout.trim(), "bound", withCap.stderr);
    const without = run([]);
    assert.notEqual(without.status, 0);
    assert.match(without.stderr, /operation not permitted/);
  });
});

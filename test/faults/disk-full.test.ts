// A full filesystem under what the programs write: a 4 MiB tmpfs this test mounts and fills.
//  - `switchyard-lab controlplane up --state-dir` there fails with one line naming the file it could not write,
//    and leaves only whole files (each is written under a temporary name and renamed), so an `up` after some
//    space is freed goes on from them: freed a page at a time, each `up` gets further, until every certificate
//    and kubeconfig is in place and the line says etcd's write-ahead log cannot fit. The state file keeps its
//    last whole content when a write of it fails.
//  - switchyard-dns -pidfile there logs CoreDNS 1.14.7's line and keeps answering, as CoreDNS does.
//  - switchyard-proxy --write-config-to there exits 1 naming the cause, as kube-proxy v1.37.2 does.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { differentialSkip, startPair } from "@switchyard/cluster-dns/testing";
import { freeControlPlanePorts, missingControlPlane, resolveBinary } from "@switchyard/testbed";
import { type ControlPlaneState, statePaths, up, writeState } from "@switchyard/testbed/controlplane";

const run = promisify(execFile);
const LAB = fileURLToPath(new URL("../../lab/bin/switchyard-lab.js", import.meta.url));
const PROXY = fileURLToPath(new URL("../../apps/kube-proxy/bin/switchyard-proxy.js", import.meta.url));
const PAGE = 4096;

const skip =
  (process.getuid?.() !== 0 ? "needs root to mount a tmpfs" : undefined) ??
  missingControlPlane(["kube-proxy"]) ??
  differentialSkip();

/** Runs a command; its exit code and output, whether it failed or not. */
async function exec(file: string, args: readonly string[]) {
  try {
    const { stdout, stderr } = await run(file, args, { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/**
 * Every file of a control plane's state folder that is not whole, and every temporary file left: certificates and
 * keys end with their PEM trailer, kubeconfigs with their last line, the state file parses. etcd's folder and the
 * logs are the components' own.
 */
function brokenFiles(dir: string): string[] {
  const broken: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "etcd" && entry.name !== "logs") walk(path);
        continue;
      }
      const text = readFileSync(path, "utf8");
      const whole = /\.tmp$/.test(path)
        ? false
        : /\.(crt|key|csr|pub)$/.test(path)
          ? /-----END [A-Z ]+-----\n$/.test(text)
          : /\.kubeconfig$/.test(path)
            ? /\ncurrent-context: \S+\n$/.test(text)
            : /\.json$/.test(path)
              ? text.endsWith("}\n") && JSON.parse(text) !== undefined
              : text.length > 0;
      if (!whole) broken.push(`${path} (${text.length} bytes)`);
    }
  };
  walk(dir);
  return broken;
}

describe("a full filesystem under the lab's state, the DNS server's pidfile and the proxy's config", {
  skip,
}, () => {
  const mount = mkdtempSync(join(tmpdir(), "sy-full-"));
  const filler = join(mount, "filler");

  /** Fills the filesystem to its last byte. */
  const fill = () => {
    try {
      appendFileSync(filler, Buffer.alloc(8 * 2 ** 20));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
    }
  };
  /** Frees `pages` pages (tmpfs counts whole pages). */
  const free = (pages: number) => truncateSync(filler, Math.max(0, statSync(filler).size - pages * PAGE));

  before(() => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "sy-faults-full", mount]);
  });

  after(() => {
    execFileSync("umount", [mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  test("controlplane up: one line naming the file, and only whole files left", async () => {
    const stateDir = join(mount, "cli");
    fill();
    const ports = await freeControlPlanePorts();
    const r = await exec(process.execPath, [
      LAB,
      ...["controlplane", "up", "--state-dir", stateDir, "--no-controller-manager", "--no-scheduler"],
      ...["--apiserver-port", String(ports.apiserver), "--etcd-port", String(ports.etcdClient)],
      ...["--etcd-peer-port", String(ports.etcdPeer)],
    ]);
    assert.equal(r.code, 1, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("switchyard-lab:"));
    assert.deepEqual(errors, [
      `switchyard-lab: cannot write ${join(stateDir, "pki", "ca.key")}: no space left on device`,
    ]);
    assert.deepEqual(brokenFiles(stateDir), []);
    rmSync(stateDir, { recursive: true });
  });

  test("up again after each freed page: it goes on from what is there, until etcd's log is what cannot fit", async () => {
    const stateDir = join(mount, "pages");
    fill();
    const ports = await freeControlPlanePorts();
    const failed: string[] = [];
    for (let attempt = 0; attempt < 100; attempt++) {
      const err = await up({
        stateDir,
        detached: false,
        controllerManager: false,
        scheduler: false,
        ports,
        out: { write: () => {} },
      }).then(
        () => assert.fail("a control plane came up on a full filesystem"),
        (e: Error) => e.message,
      );
      assert.deepEqual(brokenFiles(stateDir), [], `after: ${err}`);
      if (err.startsWith("not enough space for etcd")) break;
      const path = new RegExp(`^cannot write (${stateDir}/\\S+): no space left on device$`).exec(err)?.[1];
      assert.ok(path, err);
      failed.push(path.slice(stateDir.length + 1));
      free(1);
    }
    const last = failed.at(-1);
    assert.ok(last?.endsWith(".kubeconfig"), `the kubeconfigs are written last: ${failed.join(", ")}`);
    // Each kind of file was refused on the way; a file replaced in place needs room for both copies for a moment,
    // so one may be refused twice. Certificates are signed side by side, and the error names the first of them
    // in the order they were started that failed, so which kinds of a certificate's files show varies.
    for (const kind of ["ca.key", "sa.key", ".csr", ".kubeconfig"])
      assert.ok(
        failed.some((f) => f.endsWith(kind)),
        `no ${kind} refused: ${failed.join(", ")}`,
      );
    const paths = statePaths(stateDir);
    for (const file of [paths.adminKubeconfig, join(paths.pki, "apiserver.crt"), join(paths.pki, "sa.pub")])
      assert.ok(existsSync(file), file);

    // The state file: a write that cannot be done leaves the last one whole.
    const state = { server: "https://127.0.0.1:1", processes: [] } as unknown as ControlPlaneState;
    free(1);
    writeState(paths, state);
    fill();
    assert.throws(() => writeState(paths, { ...state, server: "https://127.0.0.1:2" }), {
      message: `cannot write ${paths.stateFile}: no space left on device`,
    });
    assert.equal(JSON.parse(readFileSync(paths.stateFile, "utf8")).server, "https://127.0.0.1:1");
    assert.deepEqual(brokenFiles(stateDir), []);
    rmSync(stateDir, { recursive: true });
  });

  test("switchyard-dns -pidfile: CoreDNS's error line, and both keep answering", async () => {
    fill();
    const corefile = ".:{{PORT}} {\n    hosts {\n        192.0.2.1 web.test\n    }\n}\n";
    const pair = await startPair(corefile, {}, ["-pidfile", `${mount}/{{PORT}}.pid`]);
    try {
      const line = (s: typeof pair.ours) =>
        s
          .output()
          .split("\n")
          .find((l) => l.includes("pidfile"))
          ?.replace(String(s.port), "PORT");
      assert.equal(
        line(pair.coredns),
        `[ERROR] Could not write pidfile: write ${mount}/PORT.pid: no space left on device`,
      );
      assert.equal(line(pair.ours), line(pair.coredns));
      const { ours, coredns } = await pair.dig("web.test", "A");
      assert.match(coredns, /IN A 192\.0\.2\.1/);
      assert.equal(ours, coredns);
    } finally {
      await pair.stop();
    }
  });

  test("switchyard-proxy --write-config-to: exit 1 with the cause, as kube-proxy", async () => {
    fill();
    const upstream = await exec(resolveBinary("kube-proxy").path ?? "", [
      `--write-config-to=${mount}/upstream.yaml`,
    ]);
    const ours = await exec(process.execPath, [PROXY, `--write-config-to=${mount}/ours.yaml`]);
    assert.equal(upstream.code, 1);
    assert.match(upstream.stderr, /no space left on device/);
    assert.equal(ours.code, 1);
    assert.equal(
      ours.stderr,
      `switchyard-proxy: --write-config-to ${mount}/ours.yaml: ENOSPC: no space left on device, write\n`,
    );
    // Both leave the file they created, as far as it got.
    assert.equal(statSync(`${mount}/ours.yaml`).size, statSync(`${mount}/upstream.yaml`).size);
  });
});

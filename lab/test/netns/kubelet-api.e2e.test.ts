import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { get } from "node:http";
import { request } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type HttpRestClient, pods } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, resolveBinary } from "@switchyard/testbed";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Pod } from "kubernetes-types/core/v1.js";
import { processStartTicks } from "../../src/agent/container-shim.js";
import type { ContainerRecord } from "../../src/agent/runtime-record.js";
import { restartAgent } from "../../src/netns/agent-restart.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "syk", nodes: 1, zones: 1, nodeCidr: "198.18.9.0/24", clusterCidr: "10.251.0.0/16" };
const skip =
  process.getuid?.() !== 0
    ? "the netns runtime needs root (network namespaces, veth, routes)"
    : missingControlPlane(["kube-controller-manager", "kube-scheduler", "kubectl"]);
const nodeIp = "198.18.9.11";
const ns = "kubelet-api";
const execFileAsync = promisify(execFile);

const counterPod = (name: string, args: string[]): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: "counter", image: "switchyard/counter:0.1.0", args }],
  },
});

const echoPod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "echo" },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "echo", image: "switchyard/echo:0.1.0" }] },
};

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, feeding it `input` (or an open, silent stdin when undefined). */
function runToEnd(argv: string[], input?: string): Promise<Finished> {
  const child = spawn(argv[0] ?? "", argv.slice(1));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  if (input !== undefined) child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits for `kubectl port-forward` to print one "Forwarding from 127.0.0.1:L -> P" line per port. */
function forwardedPorts(child: ReturnType<typeof spawn>, count: number): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (d: Buffer) => {
      text += d.toString();
      const found = [...text.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)];
      if (found.length >= count) resolve(new Map(found.map((m) => [Number(m[2]), Number(m[1])])));
    });
    child.on("exit", (code) => reject(new Error(`kubectl port-forward exited (${code}): ${text}`)));
  });
}

/** An init container that leaves a file for the main one, a sidecar serving HTTP, and the main container. */
const sidecarPod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "with-sidecar" },
  spec: {
    terminationGracePeriodSeconds: 2,
    volumes: [{ name: "work", emptyDir: {} }],
    initContainers: [
      {
        name: "setup",
        image: "busybox",
        command: ["sh", "-c", "sleep 1; echo set up > /work/setup"],
        volumeMounts: [{ name: "work", mountPath: "/work" }],
      },
      { name: "proxy", image: "switchyard/echo:0.1.0", restartPolicy: "Always" },
    ],
    containers: [
      {
        name: "app",
        image: "busybox",
        command: ["sh", "-c", "cat /work/setup; exec sleep 3600"],
        volumeMounts: [{ name: "work", mountPath: "/work" }],
      },
    ],
  },
};

/** A busybox pod whose one container runs `script` (the node's network with `hostNetwork`). */
const busyboxPod = (name: string, script: string, hostNetwork = false): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    terminationGracePeriodSeconds: 1,
    ...(hostNetwork ? { hostNetwork } : {}),
    containers: [{ name: "main", image: "busybox", command: ["sh", "-c", script] }],
  },
});

/** A pod for the agent's restart: web, ready through an exec probe, and a worker that exits 3 once told to. */
const adoptedPod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "kept" },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [
      {
        name: "web",
        image: "switchyard/echo:0.1.0",
        readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
      },
      {
        name: "worker",
        image: "busybox",
        command: [
          "sh",
          "-c",
          "echo started; while [ ! -e /run/stop ]; do sleep 0.2; done; echo stopping; exit 3",
        ],
      },
    ],
  },
};

const numbers = (out: string) => [...out.matchAll(/line (\d+)/g)].map((m) => Number(m[1]));

/** A process that should have ended: its state, its parent's, its children and what it sees at /run, for a failure. */
async function processReport(pid: number): Promise<string> {
  const status = (p: number | string) => {
    try {
      const text = readFileSync(`/proc/${p}/status`, "utf8");
      return text
        .split("\n")
        .filter((l) => /^(Name|State|PPid|SigBlk|SigIgn|SigCgt):/.test(l))
        .join(", ");
    } catch {
      return "gone";
    }
  };
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8").trim();
    } catch (err) {
      return (err as Error).message;
    }
  };
  const ppid = /PPid:\s+(\d+)/.exec(status(pid))?.[1] ?? "?";
  const seen = await execFileAsync("nsenter", ["-t", String(pid), "-m", "-r", "ls", "-la", "/run"]).then(
    (r) => r.stdout,
    (e: Error) => e.message,
  );
  return [
    `process ${pid}: ${status(pid)}; cmdline ${read(`/proc/${pid}/cmdline`).replaceAll("\0", " ")}`,
    `children: ${read(`/proc/${pid}/task/${pid}/children`)}; wchan ${read(`/proc/${pid}/wchan`)}`,
    `parent ${ppid}: ${status(ppid)}; cmdline ${read(`/proc/${ppid}/cmdline`).replaceAll("\0", " ")}`,
    `its /run:\n${seen}`,
  ].join("\n");
}

describe("kubelet API of the netns node agent, through the real apiserver and kubectl", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  const kubectl = async (...args: string[]) =>
    (
      await execFileAsync(resolveBinary("kubectl").path ?? "kubectl", [
        "--kubeconfig",
        state.kubeconfig,
        "-n",
        ns,
        ...args,
      ])
    ).stdout;
  const kubectlArgv = (...args: string[]) => [
    resolveBinary("kubectl").path ?? "kubectl",
    "--kubeconfig",
    state.kubeconfig,
    "-n",
    ns,
    ...args,
  ];
  const running = (name: string) =>
    eventually(`${name} running`, async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/${name}`);
      return pod.status?.phase === "Running" ? pod : undefined;
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-lab-"));
    // A lab folder someone made with the default mode: up must tighten it.
    chmodSync(dir, 0o755);
    state = await upTestLab(dir, lab);
    console.log(`# lab up in ${state.upSeconds?.toFixed(1)}s`);
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, counterPod("ticker", []));
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, counterPod("crasher", ["--exit-after", "3"]));
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, echoPod);
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, counterPod("chatter", ["--stderr"]));
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("kubectl logs, --tail and --timestamps", async () => {
    const out = await eventually("three lines logged", async () => {
      const text = await kubectl("logs", "ticker");
      return numbers(text).length >= 3 ? text : undefined;
    });
    const seen = numbers(out);
    assert.deepEqual(seen.slice(0, 3), [1, 2, 3], out);
    const tail = await kubectl("logs", "ticker", "--tail=2");
    assert.equal(tail.trimEnd().split("\n").length, 2, tail);
    const stamped = await kubectl("logs", "ticker", "--tail=1", "--timestamps");
    assert.match(stamped, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z line \d+\n$/);
  });

  test("kubectl logs -f sees a new line arrive", async () => {
    const last = Math.max(...numbers(await kubectl("logs", "ticker")));
    const follow = spawn(resolveBinary("kubectl").path ?? "kubectl", [
      "--kubeconfig",
      state.kubeconfig,
      "-n",
      ns,
      "logs",
      "-f",
      "ticker",
    ]);
    try {
      const newer = await new Promise<number>((resolve, reject) => {
        let text = "";
        follow.stdout.on("data", (d: Buffer) => {
          text += d.toString();
          const fresh = numbers(text).find((n) => n > last);
          if (fresh !== undefined) resolve(fresh);
        });
        follow.on("exit", (code) => reject(new Error(`kubectl logs -f exited (${code}): ${text}`)));
      });
      assert.ok(newer > last);
    } finally {
      follow.kill();
    }
  });

  test("kubectl logs --previous after the container restarted", async () => {
    await eventually("crasher restarted", async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/crasher`);
      return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
    });
    const previous = await kubectl("logs", "crasher", "--previous");
    assert.deepEqual(numbers(previous), [1, 2, 3], previous);
    await assert.rejects(
      kubectl("logs", "ticker", "--previous"),
      /previous terminated container "counter" in pod "ticker" not found/,
    );
    await assert.rejects(
      kubectl("logs", "ticker", "-c", "nope"),
      /container nope is not valid for pod ticker/,
    );
  });

  test("stdout and stderr kept apart: the CRI log's stream field; kubectl logs has both; attach gives each its own", async () => {
    const pod = await running("chatter");
    const logged = await eventually("both outputs logged", async () => {
      const text = await kubectl("logs", "chatter");
      return text.includes("line 2\n") && text.includes("warn 2\n") ? text : undefined;
    });
    assert.match(logged, /^line 1\nwarn 1\n/, "as the kubelet serves them: both streams, in order");
    const podDir = `${ns}_chatter_${pod.metadata?.uid?.slice(0, 8)}`;
    const cri = readFileSync(join(labPaths(dir).pods, podDir, "logs", "counter", "0.log"), "utf8");
    assert.match(cri, /^\S+ stdout F line 1$/m);
    assert.match(cri, /^\S+ stderr F warn 1$/m);
    assert.doesNotMatch(cri, /stdout F warn|stderr F line/);
    const [bin = "kubectl", ...args] = kubectlArgv("attach", "chatter");
    const attach = spawn(bin, args);
    try {
      const seen = await new Promise<{ out: string; err: string }>((resolve, reject) => {
        const got = { out: "", err: "" };
        const check = () => {
          if (/line \d+\n.*line \d+\n/s.test(got.out) && /warn \d+\n.*warn \d+\n/s.test(got.err))
            resolve(got);
        };
        attach.stdout.on("data", (d: Buffer) => {
          got.out += d.toString();
          check();
        });
        attach.stderr.on("data", (d: Buffer) => {
          got.err += d.toString();
          check();
        });
        attach.on("exit", (code) =>
          reject(new Error(`kubectl attach exited (${code}): ${got.out}${got.err}`)),
        );
      });
      assert.doesNotMatch(seen.out, /warn/);
      assert.doesNotMatch(seen.err, /line \d/);
    } finally {
      attach.kill();
    }
  });

  test("the node proxy reaches the kubelet; without a client certificate it answers 401", async () => {
    assert.equal(await kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/healthz"), "ok");
    const pods = JSON.parse(await kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/pods")) as {
      items: Pod[];
    };
    assert.deepEqual(pods.items.map((p) => p.metadata?.name).sort(), [
      "chatter",
      "crasher",
      "echo",
      "ticker",
    ]);
    const anonymous = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: nodeIp, port: 10250, path: "/pods", rejectUnauthorized: false }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    assert.deepEqual(anonymous, { status: 401, body: "Unauthorized" });
  });

  test("files after up: the lab folder (0755 before), the control plane's and a pod's 0700, keys 0600", async () => {
    const pod = await running("ticker");
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    const paths = labPaths(dir);
    assert.equal(mode(dir), "700");
    assert.equal(mode(paths.controlPlane), "700");
    const pki = join(paths.controlPlane, "pki");
    const keys = readdirSync(pki, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".key"));
    assert.ok(keys.includes("kubelet-node-1.key") && keys.includes("etcd/server.key"), keys.join(" "));
    for (const key of keys) assert.equal(mode(join(pki, key)), "600", key);
    const podDir = join(paths.pods, `${ns}_ticker_${pod.metadata?.uid?.slice(0, 8)}`);
    // The token has the kube-api-access volume's mode, as the kubelet writes it for a pod of root containers; the
    // pod's folder keeps the host's other users out.
    assert.equal(mode(podDir), "700");
    assert.equal(mode(join(podDir, "serviceaccount", "token")), "644");
    assert.equal(mode(state.kubeconfig), "600");
  });

  test("a certificate of the lab CA without a CN is nobody: 401, also for a streaming upgrade", async (t) => {
    const certs = mkdtempSync(join(tmpdir(), "sy-kubelet-nocn-"));
    t.after(() => rmSync(certs, { recursive: true, force: true }));
    const pki = join(labPaths(dir).controlPlane, "pki");
    const openssl = (...args: string[]) => execFileAsync("openssl", args, { cwd: certs });
    // system:masters would be allowed everything, were the certificate taken as user "".
    await openssl(
      ...["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/O=system:masters"],
      ...["-keyout", "nocn.key", "-out", "nocn.csr"],
    );
    await openssl(
      ...["x509", "-req", "-in", "nocn.csr", "-CA", join(pki, "ca.crt"), "-CAkey", join(pki, "ca.key")],
      ...["-set_serial", String(Date.now()), "-days", "1", "-out", "nocn.crt"],
    );
    const asNobody = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const options = {
          host: nodeIp,
          port: 10250,
          path,
          method: headers.Upgrade ? "POST" : "GET",
          headers,
          rejectUnauthorized: false,
          cert: readFileSync(join(certs, "nocn.crt")),
          key: readFileSync(join(certs, "nocn.key")),
        };
        const req = request(options, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("upgrade", (res, socket) => {
          socket.destroy();
          resolve({ status: res.statusCode ?? 0, body: "upgraded" });
        });
        req.on("error", reject);
        req.end();
      });
    assert.deepEqual(await asNobody("/pods"), { status: 401, body: "Unauthorized" });
    const exec = await asNobody(`/exec/${ns}/ticker/counter?command=true&output=1`, {
      Connection: "Upgrade",
      Upgrade: "SPDY/3.1",
      "X-Stream-Protocol-Version": "v4.channel.k8s.io",
    });
    assert.equal(exec.status, 401, exec.body);
  });

  test("callers are authorized with SubjectAccessReviews: nodes/pods lets a user list pods, not read logs", async () => {
    const certs = mkdtempSync(join(tmpdir(), "sy-kubelet-user-"));
    const pki = join(labPaths(dir).controlPlane, "pki");
    const openssl = (...args: string[]) => execFileAsync("openssl", args, { cwd: certs });
    await openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/O=readers/CN=jane",
      "-keyout",
      "jane.key",
      "-out",
      "jane.csr",
    );
    await openssl(
      ...["x509", "-req", "-in", "jane.csr", "-CA", join(pki, "ca.crt"), "-CAkey", join(pki, "ca.key")],
      ...["-set_serial", String(Date.now()), "-days", "1", "-out", "jane.crt"],
    );
    const rbac = "/apis/rbac.authorization.k8s.io/v1";
    await client.call("POST", `${rbac}/clusterroles`, {
      metadata: { name: "node-pods-reader" },
      rules: [{ apiGroups: [""], resources: ["nodes/pods"], verbs: ["get"] }],
    });
    await client.call("POST", `${rbac}/clusterrolebindings`, {
      metadata: { name: "jane-node-pods-reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "node-pods-reader" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
    });
    // The agent caches a denial for 30 s: ask the apiserver first until RBAC has the binding.
    await eventually("RBAC allows jane nodes/pods", async () => {
      const review = await client.call<{ status?: { allowed?: boolean } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          spec: {
            user: "jane",
            resourceAttributes: { verb: "get", resource: "nodes", subresource: "pods", name: "node-1" },
          },
        },
      );
      return review.status?.allowed === true ? true : undefined;
    });
    const asJane = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const options = {
          host: nodeIp,
          port: 10250,
          path,
          rejectUnauthorized: false,
          cert: readFileSync(join(certs, "jane.crt")),
          key: readFileSync(join(certs, "jane.key")),
        };
        const req = request(options, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const pods = await asJane("/pods");
    assert.equal(pods.status, 200, pods.body);
    assert.match(pods.body, /"kind":"PodList"/);
    assert.deepEqual(await asJane(`/containerLogs/${ns}/ticker/counter`), {
      status: 403,
      body: "Forbidden (user=jane, verb=get, resource=nodes, subresource(s)=[proxy])\n",
    });
    assert.deepEqual(await asJane("/healthz"), {
      status: 403,
      body: "Forbidden (user=jane, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n",
    });
  });

  test("kubectl exec: stdout, stderr and the exit code; stdin; inside the pod", async () => {
    await running("ticker");
    const failing = await runToEnd(
      kubectlArgv("exec", "ticker", "--", "sh", "-c", "echo out; echo err >&2; exit 3"),
    );
    assert.equal(failing.code, 3, failing.stderr);
    assert.equal(failing.stdout, "out\n");
    assert.match(failing.stderr, /^err\n.*command terminated with exit code 3/s);
    const echoed = await runToEnd(kubectlArgv("exec", "-i", "ticker", "--", "cat"), "through stdin\n");
    assert.deepEqual(echoed, { code: 0, stdout: "through stdin\n", stderr: "" });
    assert.equal(await kubectl("exec", "ticker", "--", "hostname"), "ticker\n");
    const missing = await runToEnd(kubectlArgv("exec", "ticker", "--", "no-such-command"));
    assert.equal(missing.code, 127, missing.stderr);
    assert.match(missing.stderr, /no-such-command: No such file or directory/);
  });

  test("kubectl exec -it runs on a terminal of the client's size", async () => {
    const quoted = kubectlArgv("exec", "-it", "ticker", "--", "sh", "-c", "tty; sleep 0.5; stty size").map(
      (a) => `'${a.replace(/'/g, `'\\''`)}'`,
    );
    // script(1) gives kubectl the terminal it wants; stty sets the size kubectl sends. The size comes on its own
    // stream, usually just after the command started (as with any runtime), hence the pause before stty.
    const result = await runToEnd([
      "script",
      "-q",
      "-e",
      "-c",
      `stty rows 31 cols 97; ${quoted.join(" ")}`,
      "/dev/null",
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\/dev\/pts\/\d+\r\n31 97\r\n/);
  });

  test("kubectl port-forward reaches the pod's HTTP and TCP ports", async () => {
    await running("echo");
    const [bin = "kubectl", ...args] = kubectlArgv("port-forward", "pod/echo", ":8080", ":9000");
    const forward = spawn(bin, args);
    try {
      const local = await forwardedPorts(forward, 2);
      const http = await eventually(
        "an HTTP answer through the forward",
        () =>
          new Promise<string>((resolve, reject) => {
            get({ host: "127.0.0.1", port: local.get(8080) }, (res) => {
              let body = "";
              res.on("data", (d: Buffer) => (body += d.toString()));
              res.on("end", () => resolve(body));
            }).on("error", reject);
          }),
      );
      assert.match(http, /^echo (::ffff:)?127\.0\.0\.1:\d+\n$/);
      // The TCP port speaks first and closes: its whole answer must survive the hand-over to the agent.
      const tcp = await new Promise<string>((resolve, reject) => {
        let text = "";
        const socket = connect({ host: "127.0.0.1", port: local.get(9000) ?? 0 });
        socket.on("data", (d: Buffer) => (text += d.toString()));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
      assert.match(tcp, /^echo (::ffff:)?127\.0\.0\.1:\d+\n$/);
    } finally {
      forward.kill();
    }
  });

  test("kubectl attach follows the container's output from now on", async () => {
    const last = Math.max(...numbers(await kubectl("logs", "ticker")));
    const [bin = "kubectl", ...args] = kubectlArgv("attach", "ticker");
    const attach = spawn(bin, args);
    try {
      const seen = await new Promise<number[]>((resolve, reject) => {
        let text = "";
        attach.stdout.on("data", (d: Buffer) => {
          text += d.toString();
          if (numbers(text).length >= 2) resolve(numbers(text));
        });
        attach.on("exit", (code) => reject(new Error(`kubectl attach exited (${code}): ${text}`)));
      });
      assert.ok(
        seen.every((n) => n > last),
        `attached lines ${seen} include some logged before (up to ${last})`,
      );
    } finally {
      attach.kill();
    }
  });

  test("init containers in order, a sidecar beside the main container, the statuses a kubelet posts", async () => {
    const seen: Pod[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      const stream = client.watch(pods, {
        namespace: ns,
        fieldSelector: "metadata.name=with-sidecar",
        signal: abort.signal,
      });
      for await (const e of stream)
        if (e.type !== "BOOKMARK" && e.type !== "ERROR") seen.push(e.object as Pod);
    })();
    try {
      await client.call("POST", `/api/v1/namespaces/${ns}/pods`, sidecarPod);
      const pod = await eventually("the pod Ready", () =>
        seen.find((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")),
      );
      // While setup ran: Pending, not Initialized, the main container waiting for the init containers.
      const initializing = seen.find((p) =>
        p.status?.initContainerStatuses?.some((c) => c.name === "setup" && c.state?.running),
      );
      assert.equal(initializing?.status?.phase, "Pending");
      const initCondition = initializing?.status?.conditions?.find((c) => c.type === "Initialized");
      assert.equal(initCondition?.status, "False");
      assert.equal(initCondition?.reason, "ContainersNotInitialized");
      assert.equal(initCondition?.message, "containers with incomplete status: [setup proxy]");
      assert.equal(initializing?.status?.containerStatuses?.[0]?.state?.waiting?.reason, "PodInitializing");

      const status = pod.status;
      assert.equal(status?.phase, "Running");
      const [setup, proxy] = status?.initContainerStatuses ?? [];
      assert.equal(setup?.state?.terminated?.reason, "Completed");
      assert.equal(setup?.ready, true);
      assert.ok(proxy?.state?.running && proxy.started && proxy.ready, JSON.stringify(proxy));
      const app = status?.containerStatuses?.[0];
      assert.ok(app?.state?.running, JSON.stringify(app));
      // Each after the one before (the API's times are whole seconds).
      const at = (t: string | undefined) => Date.parse(t ?? "");
      assert.ok(at(setup?.state?.terminated?.finishedAt) <= at(proxy?.state?.running?.startedAt));
      assert.ok(at(proxy?.state?.running?.startedAt) <= at(app?.state?.running?.startedAt));
      assert.equal((await kubectl("logs", "with-sidecar", "-c", "app")).trim(), "set up");
      // The sidecar's port serves on the pod's address (once it listens: without a readiness probe, running is
      // ready, as with the kubelet).
      const body = await eventually(
        "the sidecar answering",
        () =>
          new Promise<string>((resolve, reject) => {
            get({ host: status?.podIP, port: 8080 }, (res) => {
              let text = "";
              res.on("data", (d: Buffer) => (text += d.toString()));
              res.on("end", () => resolve(text));
            }).on("error", reject);
          }),
      );
      assert.match(body, /^with-sidecar /);

      // On the way down the main container stops first; the sidecar runs until it has.
      await client.call("DELETE", `/api/v1/namespaces/${ns}/pods/with-sidecar`);
      await eventually("both stopped", () =>
        seen.find(
          (p) =>
            p.status?.containerStatuses?.[0]?.state?.terminated &&
            p.status.initContainerStatuses?.[1]?.state?.terminated,
        ),
      );
      const mainFirst = seen.find(
        (p) =>
          p.status?.containerStatuses?.[0]?.state?.terminated &&
          p.status.initContainerStatuses?.[1]?.state?.running,
      );
      assert.ok(mainFirst, "a status with the main container stopped and the sidecar still running");
      const sidecarFirst = seen.find(
        (p) =>
          p.status?.initContainerStatuses?.[1]?.state?.terminated &&
          p.status.containerStatuses?.[0]?.state?.running,
      );
      assert.equal(sidecarFirst, undefined, "the sidecar stopped before the main container");
    } finally {
      abort.abort();
      await watching.catch(() => {});
    }
  });

  test("a pod over its ephemeral-storage limit is evicted as the kubelet evicts it", async () => {
    // The e2e suite's evicted pod: 10 MiB written in its root under a 5Mi limit. (That its Service then has no
    // endpoint is the suite's spec, run on both stacks by conformance.e2e.) Beside it, a pod that writes 2 MiB
    // under the same limit stays.
    const writer = (name: string, mib: number) => ({
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name,
            image: "busybox",
            command: ["sh", "-c", `sleep 2; dd if=/dev/urandom of=file bs=1M count=${mib}; exec sleep 10000`],
            resources: { limits: { "ephemeral-storage": "5Mi" } },
          },
        ],
      },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, writer("modest", 2));
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, writer("hog", 10));
    const evicted = await eventually(
      "the hog evicted",
      async () => {
        const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/hog`);
        return pod.status?.phase === "Failed" ? pod : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(evicted.status?.reason, "Evicted");
    assert.equal(
      evicted.status?.message,
      "Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. ",
    );
    const hog = evicted.status?.containerStatuses?.[0];
    assert.ok(hog?.state?.terminated, JSON.stringify(hog));
    assert.equal(hog?.restartCount, 0, "an evicted pod's container is not restarted");
    assert.equal(evicted.status?.conditions?.find((c) => c.type === "Ready")?.reason, "PodFailed");
    // The modest pod had written its 2 MiB by the check that evicted the hog, and it still runs.
    const modest = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/modest`);
    assert.equal(modest.status?.phase, "Running", JSON.stringify(modest.status));
  });

  test("CPU and memory limits in the pod's own cgroups; an OOM kill reported as the kubelet reports it", async () => {
    const node = state.plan.nodeList[0];
    assert.ok(
      node?.cgroup && node.limits,
      "this machine has cgroup2, a BPF file system and memory and cpu controllers",
    );
    const limited: Pod = {
      metadata: { name: "limited" },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "app",
            image: "busybox",
            command: ["sh", "-c", "cat /proc/self/cgroup; exec sleep 10000"],
            resources: { requests: { cpu: "100m", memory: "16Mi" }, limits: { cpu: "250m", memory: "64Mi" } },
          },
        ],
      },
    };
    // dd's 64 MiB block is written to, so the kernel must find it room: it cannot under a 32Mi limit.
    const greedy: Pod = {
      metadata: { name: "greedy" },
      spec: {
        restartPolicy: "Never",
        containers: [
          {
            name: "dd",
            image: "busybox",
            command: ["dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"],
            resources: { limits: { memory: "32Mi" } },
          },
        ],
      },
    };
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, limited);
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, greedy);
    const uid = (await running("limited")).metadata?.uid;
    const dirs = {
      unified: join(node.cgroup, `pod${uid}`, "app"),
      memory: join(node.limits.memory, `pod${uid}`, "app"),
      cpu: join(node.limits.cpu, `pod${uid}`, "app"),
    };
    const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8").trim();
    assert.equal(read(dirs.memory, "memory.limit_in_bytes"), String(64 * 1024 * 1024));
    assert.equal(read(dirs.cpu, "cpu.cfs_quota_us"), "25000");
    assert.equal(read(dirs.cpu, "cpu.cfs_period_us"), "100000");
    assert.equal(read(dirs.cpu, "cpu.shares"), "102");
    // The pod's own cgroup above it, with the pod's sums (one container here: the same values).
    assert.equal(read(join(dirs.memory, ".."), "memory.limit_in_bytes"), String(64 * 1024 * 1024));
    assert.equal(read(join(dirs.cpu, ".."), "cpu.cfs_quota_us"), "25000");
    // The container's one process is in all three (it joins them as its sandbox is done), and says so itself.
    // Its shell's `cat` is briefly a second process there, so wait for the one that stays: the same in each.
    const procs = await eventually("the container alone in its cgroups", async () => {
      const each = Object.values(dirs).map((d) => read(d, "cgroup.procs"));
      return each.every((p) => /^\d+$/.test(p)) ? each : undefined;
    });
    assert.deepEqual(new Set(procs).size, 1, JSON.stringify(procs));
    const own = await eventually("the cgroup lines in the log", async () => {
      const out = await kubectl("logs", "limited");
      return out.includes("memory:") ? out : undefined;
    });
    for (const controller of ["memory", "cpu"])
      assert.match(own, new RegExp(`:${controller}[,:].*/pod${uid}/app$`, "m"));
    assert.match(own, new RegExp(`^0::.*/pod${uid}/app$`, "m"));
    // kubectl exec runs in the container's cgroups too, as a runtime's exec does: what it starts counts there.
    const exec = await kubectl("exec", "limited", "--", "cat", "/proc/self/cgroup");
    for (const controller of ["memory", "cpu"])
      assert.match(exec, new RegExp(`:${controller}[,:].*/pod${uid}/app$`, "m"), exec);
    assert.match(exec, new RegExp(`^0::.*/pod${uid}/app$`, "m"), exec);

    const ended = await eventually(
      "greedy ended",
      async () => {
        const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/greedy`);
        return pod.status?.phase === "Failed" ? pod : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const dd = ended.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(dd?.reason, "OOMKilled", JSON.stringify(dd));
    assert.equal(dd?.exitCode, 137);

    // Deleted: the pod's directories go with it, in every hierarchy.
    await kubectl("delete", "pod", "limited", "greedy", "--wait=true");
    for (const dir of Object.values(dirs)) assert.equal(existsSync(join(dir, "..")), false, dir);
  });

  test("securityContext as containerd applies it: user and groups, capabilities, no new privileges, a read-only root", async () => {
    const report =
      'id; grep -E "^(CapBnd|CapEff|NoNewPrivs):" /proc/self/status; echo "ports $(cat /proc/sys/net/ipv4/ip_local_port_range)"; T=/var/run/secrets/kubernetes.io/serviceaccount/token; stat -c "token %a %g" $T; head -c 2 $T >/dev/null && echo token-readable; touch /oops; touch /scratch/ok && echo scratch-ok; exec sleep 10000';
    const restricted: Pod = {
      metadata: { name: "restricted" },
      spec: {
        terminationGracePeriodSeconds: 1,
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 3000,
          supplementalGroups: [4000],
          fsGroup: 2000,
          sysctls: [{ name: "net.ipv4.ip_local_port_range", value: "40000 40100" }],
        },
        volumes: [{ name: "scratch", emptyDir: {} }],
        containers: [
          {
            name: "app",
            image: "busybox",
            command: ["sh", "-c", report],
            volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] },
            },
          },
          // Upstream's agnhost (under the host's /root, 0700) serving port 80 as a non-root user: containerd 2's
          // unprivileged ports in the pod's namespace, and the program reachable.
          {
            name: "web",
            image: "registry.k8s.io/e2e-test-images/agnhost:2.53",
            args: ["netexec", "--http-port=80", "--udp-port=-1"],
            securityContext: { runAsUser: 1001, runAsNonRoot: true },
            readinessProbe: { httpGet: { path: "/", port: 80 }, periodSeconds: 1 },
          },
        ],
      },
    };
    const plain: Pod = {
      metadata: { name: "plain" },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: "app", image: "busybox", command: ["sh", "-c", report] }],
      },
    };
    const nonRoot: Pod = {
      metadata: { name: "non-root" },
      spec: {
        securityContext: { runAsNonRoot: true },
        containers: [{ name: "app", image: "busybox", command: ["sleep", "10000"] }],
      },
    };
    const unsafe: Pod = {
      metadata: { name: "unsafe-sysctl" },
      spec: {
        securityContext: { sysctls: [{ name: "net.core.somaxconn", value: "1024" }] },
        containers: [{ name: "app", image: "busybox", command: ["sleep", "10000"] }],
      },
    };
    for (const p of [restricted, plain, nonRoot, unsafe])
      await client.call("POST", `/api/v1/namespaces/${ns}/pods`, p);
    const logOf = (name: string) =>
      eventually(`${name}'s report`, async () => {
        const out = await kubectl("logs", name, "-c", "app");
        return out.includes("NoNewPrivs") && /scratch-ok|touch: \/scratch/.test(out) ? out : undefined;
      });
    const caps = (...bits: number[]) =>
      bits
        .reduce((m, b) => m | (1n << BigInt(b)), 0n)
        .toString(16)
        .padStart(16, "0");
    const out = await logOf("restricted");
    assert.match(out, /^uid=1000\b.* gid=3000\b.* groups=2000\b.*,4000\b/m);
    assert.match(out, new RegExp(`^CapBnd:\\s+${caps(10)}$`, "m"), "NET_BIND_SERVICE alone bounds it");
    assert.match(out, /^CapEff:\s+0{16}$/m, "a non-root process keeps no capability");
    assert.match(out, /^NoNewPrivs:\s+1$/m);
    assert.match(out, /touch: \/oops: Read-only file system/);
    assert.match(out, /scratch-ok/, "the emptyDir is writable by the container's user");
    assert.match(out, /^ports 40000\s+40100$/m, "the pod's sysctl in its namespace");
    // Two users in the pod, so no fsUser: the token is the fsGroup's, 0640, and read through that group.
    assert.match(out, /^token 640 2000$/m);
    assert.match(out, /^token-readable$/m);
    // kubectl exec runs as the container does.
    assert.match(await kubectl("exec", "restricted", "-c", "app", "--", "id"), /^uid=1000\b.* gid=3000\b/);
    await eventually("the non-root agnhost serving port 80 is ready", async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/restricted`);
      return pod.status?.containerStatuses?.find((c) => c.name === "web")?.ready ? pod : undefined;
    });

    // Nothing said: root with containerd's 14 default capabilities (chown dac_override fowner fsetid kill setgid
    // setuid setpcap net_bind_service net_raw sys_chroot mknod audit_write setfcap).
    const defaults = caps(0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31);
    const plainOut = await logOf("plain");
    assert.match(plainOut, /^uid=0\b/m);
    assert.match(plainOut, new RegExp(`^CapBnd:\\s+${defaults}$`, "m"));
    assert.match(plainOut, new RegExp(`^CapEff:\\s+${defaults}$`, "m"));
    assert.match(plainOut, /^NoNewPrivs:\s+0$/m);

    const refused = await eventually("non-root refused", async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/non-root`);
      return pod.status?.containerStatuses?.[0]?.state?.waiting?.reason === "CreateContainerConfigError"
        ? pod
        : undefined;
    });
    assert.equal(
      refused.status?.containerStatuses?.[0]?.state?.waiting?.message,
      `container has runAsNonRoot and image will run as root (pod: "non-root_${ns}(${refused.metadata?.uid})", container: app)`,
    );
    const forbidden = await eventually("the unsafe sysctl refused", async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/unsafe-sysctl`);
      return pod.status?.phase === "Failed" ? pod : undefined;
    });
    assert.equal(forbidden.status?.reason, "SysctlForbidden");
    assert.equal(forbidden.status?.message, 'forbidden sysctl: "net.core.somaxconn" not allowlisted');
    await kubectl("delete", "pod", "restricted", "plain", "non-root", "unsafe-sysctl", "--wait=false");
  });

  test("probes as the kubelet runs them: liveness restarts, startup holds readiness back, gRPC readiness is real", async () => {
    const podOf = (name: string, container: object): Pod => ({
      metadata: { name },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name, ...container }] },
    });
    const exec = (command: string) => ({ exec: { command: ["sh", "-c", command] }, periodSeconds: 1 });
    // Healthy for 3 s, then its liveness probe fails: killed and started again, a new instance healthy again.
    await client.call(
      "POST",
      `/api/v1/namespaces/${ns}/pods`,
      podOf("liveness", {
        image: "busybox",
        command: ["sh", "-c", "touch /tmp/healthy; sleep 3; rm /tmp/healthy; exec sleep 600"],
        livenessProbe: { ...exec("cat /tmp/healthy"), failureThreshold: 1 },
      }),
    );
    // Started only once /tmp/started exists (after 3 s): not started, not ready, until then.
    await client.call(
      "POST",
      `/api/v1/namespaces/${ns}/pods`,
      podOf("startup", {
        image: "busybox",
        command: ["sh", "-c", "sleep 3; touch /tmp/started; exec sleep 600"],
        startupProbe: { ...exec("cat /tmp/started"), failureThreshold: 30 },
        readinessProbe: exec("true"),
      }),
    );
    // agnhost's gRPC health server, SERVING: the readiness probe speaks the gRPC health protocol to it.
    await client.call(
      "POST",
      `/api/v1/namespaces/${ns}/pods`,
      podOf("grpc", {
        image: "registry.k8s.io/e2e-test-images/agnhost:2.55",
        args: ["grpc-health-checking", "--port=5000", "--http-port=8081"],
        readinessProbe: { grpc: { port: 5000 }, periodSeconds: 1 },
      }),
    );
    const getPod = (name: string) => client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/${name}`);

    const early = (await getPod("startup")).status?.containerStatuses?.[0];
    assert.equal(early?.started ?? false, false, JSON.stringify(early));
    assert.equal(early?.ready ?? false, false);
    const started = await eventually("the startup probe passed, then readiness", async () => {
      const c = (await getPod("startup")).status?.containerStatuses?.[0];
      return c?.started && c.ready ? c : undefined;
    });
    assert.equal(started.restartCount, 0);

    const restarted = await eventually(
      "the liveness probe restarted its container",
      async () => {
        const c = (await getPod("liveness")).status?.containerStatuses?.[0];
        return c && c.restartCount >= 1 && c.state?.running ? c : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(restarted.lastState?.terminated, JSON.stringify(restarted));
    assert.notEqual(restarted.lastState?.terminated?.exitCode, 0);

    const grpc = await eventually("the gRPC readiness probe passed", async () => {
      const c = (await getPod("grpc")).status?.containerStatuses?.[0];
      return c?.ready ? c : undefined;
    });
    assert.equal(grpc.restartCount, 0);
    // Made NOT_SERVING, it loses readiness after three failures.
    const pod = await getPod("grpc");
    await new Promise<void>((resolve, reject) =>
      get({ host: pod.status?.podIP, port: 8081, path: "/make-not-serving" }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      }).on("error", reject),
    );
    await eventually("the gRPC readiness probe failing", async () => {
      const c = (await getPod("grpc")).status?.containerStatuses?.[0];
      return c && !c.ready ? true : undefined;
    });
  });

  test("Secret, downward-API and projected volumes, and resource values in env, as the kubelet provides them", async () => {
    await client.call("POST", `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: "db" },
      data: { password: Buffer.from("s3cret").toString("base64") },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "settings" },
      data: { mode: "fast" },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: "files", labels: { app: "files", tier: "front" } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "files",
            image: "busybox",
            command: ["sleep", "600"],
            resources: { limits: { cpu: "250m", memory: "64Mi" } },
            env: [
              {
                name: "MEMORY_MIB",
                valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } },
              },
            ],
            volumeMounts: [
              { name: "creds", mountPath: "/creds" },
              { name: "info", mountPath: "/info" },
              { name: "all", mountPath: "/all" },
            ],
          },
        ],
        volumes: [
          { name: "creds", secret: { secretName: "db" } },
          {
            name: "info",
            downwardAPI: {
              items: [
                { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
                {
                  path: "cpu",
                  resourceFieldRef: { containerName: "files", resource: "limits.cpu", divisor: "1m" },
                },
              ],
            },
          },
          {
            name: "all",
            projected: {
              sources: [
                { configMap: { name: "settings" } },
                { downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }] } },
                { serviceAccountToken: { path: "token", audience: "vault", expirationSeconds: 3600 } },
              ],
            },
          },
        ],
      },
    });
    await running("files");
    const inPod = async (script: string) => (await kubectl("exec", "files", "--", "sh", "-c", script)).trim();
    assert.equal(await inPod("cat /creds/password"), "s3cret");
    // Every label the pod has (admission may add the node's topology labels), key="value" sorted by key.
    const labels =
      (await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/files`)).metadata?.labels ?? {};
    const expected = Object.keys(labels)
      .sort()
      .map((k) => `${k}="${labels[k]}"`)
      .join("\n");
    assert.match(expected, /^app="files"\ntier="front"/);
    assert.equal(await inPod("cat /info/labels"), expected);
    assert.equal(await inPod("cat /info/cpu"), "250");
    assert.equal(await inPod("echo $MEMORY_MIB"), "64");
    assert.equal(await inPod("cat /all/mode; echo; cat /all/name"), "fast\nfiles");
    // Read-only, as the kubelet mounts them.
    assert.match(await inPod("touch /creds/x 2>&1 || echo refused"), /refused/);
    // A real token from the TokenRequest API: for the audience asked, bound to this pod.
    const jwt = await inPod("cat /all/token");
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString());
    assert.deepEqual(claims.aud, ["vault"]);
    const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/files`);
    assert.equal(claims["kubernetes.io"]?.pod?.uid, pod.metadata?.uid);
  });

  test("a restarted agent adopts its pods; what ended while none ran is reported, deleted pods are removed", async () => {
    const node = state.plan.nodeList[0]?.name ?? "";
    const podsDir = labPaths(dir).pods;
    /** The running process of a pod's container, as the node's runtime records name it. */
    const processOf = (pod: string, container: string) => {
      const folder = readdirSync(podsDir).find((d) => d.startsWith(`${ns}_${pod}_`));
      const file = join(podsDir, folder ?? "", "runtime", `${container}.json`);
      const record = JSON.parse(readFileSync(file, "utf8")) as ContainerRecord;
      assert.ok(record.process, `${pod}/${container} runs`);
      return record.process;
    };
    const get = (name: string) => client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/${name}`);
    const status = (pod: Pod, c: string) => pod.status?.containerStatuses?.find((x) => x.name === c);
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, adoptedPod);
    await client.call(
      "POST",
      `/api/v1/namespaces/${ns}/pods`,
      busyboxPod("on-host", "exec sleep 3600", true),
    );
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, busyboxPod("graceful", "exec sleep 3600"));
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, busyboxPod("forced", "exec sleep 3600"));
    for (const name of ["on-host", "graceful", "forced"]) await running(name);
    const before = await eventually("kept ready", async () => {
      const pod = await get("kept");
      return status(pod, "web")?.ready && status(pod, "worker")?.ready ? pod : undefined;
    });
    // Running (and so ready, without a probe) is reported from the moment the container's process exists, while
    // its sandbox is still being mounted; a file touched in its /run before the tmpfs goes there would be hidden.
    // Its first line says the command itself runs.
    await eventually("the worker's command to start", async () =>
      (await kubectl("logs", "kept", "-c", "worker")).includes("started"),
    );
    const web = processOf("kept", "web");
    const worker = processOf("kept", "worker");
    const onHost = processOf("on-host", "main");
    const graceful = processOf("graceful", "main");
    const forced = processOf("forced", "main");
    const netnsOf = async (name: string) => {
      const uid = (await get(name)).metadata?.uid?.slice(0, 8) ?? "-";
      const found = readdirSync("/run/netns").filter(
        (n) => n.startsWith(`${lab.prefix}-pod-`) && n.endsWith(uid),
      );
      assert.equal(found.length, 1, `${name}'s network namespace`);
      return found[0] ?? "";
    };
    const deletedNetns = [await netnsOf("graceful"), await netnsOf("forced")];
    // web's readiness as the API shows it, all along: the kubelet keeps a ready container ready across its restart.
    const webReady: boolean[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const pod = await get("kept").catch(() => undefined);
        const ready = pod && status(pod, "web")?.ready;
        if (ready !== undefined) webReady.push(ready);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    let after: Pod;
    try {
      await restartAgent(dir, node, {
        kill: true,
        detached: false,
        whileStopped: async () => {
          // With no agent on the node: the worker ends, one pod is deleted gracefully and one at once.
          // In the container's mount namespace and root: its /run is a tmpfs of its own.
          await execFileAsync("nsenter", ["-t", String(worker.pid), "-m", "-r", "touch", "/run/stop"]);
          await eventually("the worker to end", () => processStartTicks(worker.pid) === undefined, {
            timeoutMs: 10_000,
          }).catch(async (err: Error) => {
            throw new Error(`${err.message}\n${await processReport(worker.pid)}`);
          });
          await kubectl("delete", "pod", "graceful", "--wait=false");
          await kubectl("delete", "pod", "forced", "--grace-period=0", "--force");
        },
      });
      after = await eventually("kept's worker restarted by the new agent", async () => {
        const pod = await get("kept");
        const w = status(pod, "worker");
        return w?.restartCount === 1 && w.state?.running && w.ready ? pod : undefined;
      });
    } finally {
      watching = false;
      await watch;
    }
    const workerAfter = status(after, "worker");
    assert.deepEqual(
      {
        exitCode: workerAfter?.lastState?.terminated?.exitCode,
        reason: workerAfter?.lastState?.terminated?.reason,
      },
      { exitCode: 3, reason: "Error" },
      "the exit while no agent ran, as the shim recorded it",
    );
    // The new agent's kubelet API listens once its first list is handled, a moment after the status above.
    const previous = await eventually("the new agent's kubelet API", () =>
      kubectl("logs", "kept", "-c", "worker", "--previous"),
    );
    assert.equal(previous.trim(), "started\nstopping");
    // The same processes, not new ones: nothing else about kept changed.
    assert.equal(processStartTicks(web.pid), web.pidStart, "web's process kept running");
    assert.equal(processOf("kept", "web").pid, web.pid);
    assert.equal(status(after, "web")?.restartCount, 0);
    assert.equal(after.status?.podIP, before.status?.podIP);
    assert.equal(after.status?.startTime, before.status?.startTime);
    assert.ok(
      webReady.length > 0 && webReady.every(Boolean),
      `web never turned not ready: ${webReady.join(",")}`,
    );
    assert.equal(
      processStartTicks(onHost.pid),
      onHost.pidStart,
      "the hostNetwork pod's process kept running",
    );
    assert.equal(processOf("on-host", "main").pid, onHost.pid, "and no second one was started");
    // Deleted while no agent ran: the graceful one stopped and its object removed, the forced one cleaned up.
    await eventually("graceful's object removed", () =>
      get("graceful").then(
        () => false,
        (err: Error) => err.message.includes("not found") || err.message.includes("404"),
      ),
    );
    assert.equal(processStartTicks(graceful.pid), undefined, "graceful's process ended");
    assert.equal(processStartTicks(forced.pid), undefined, "forced's process ended");
    const namespaces = readdirSync("/run/netns");
    assert.deepEqual(
      deletedNetns.filter((n) => namespaces.includes(n)),
      [],
      "the deleted pods' network namespaces are gone",
    );
    await kubectl("delete", "pod", "kept", "on-host", "--wait=false");
  });
});

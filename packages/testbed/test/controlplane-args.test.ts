import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  apiserverArgs,
  apiserverUrl,
  controllerManagerArgs,
  etcdArgs,
  statePaths,
} from "../src/controlplane/args.js";
import { firstServiceIp, withDefaults } from "../src/controlplane/options.js";
import { pkiPaths } from "../src/controlplane/pki.js";
import { assertPortsFree } from "../src/controlplane/ports.js";
import { lastErrorLine } from "../src/controlplane/processes.js";
import { Progress } from "../src/progress.js";

const paths = statePaths("/state");
const pki = pkiPaths("/state/pki");

describe("control-plane flags", () => {
  test("controller-manager runs without the two controllers Switchyard replaces", () => {
    const args = controllerManagerArgs(withDefaults({ stateDir: "/state" }), paths, pki);
    assert.ok(args.includes("--controllers=*,-endpointslice-controller,-endpointslice-mirroring-controller"));
    assert.ok(args.includes("--cluster-cidr=10.244.0.0/16"));
    assert.ok(args.includes("--bind-address=127.0.0.1"));
    const upstream = controllerManagerArgs(
      withDefaults({ stateDir: "/state", sliceControllers: true }),
      paths,
      pki,
    );
    assert.ok(upstream.includes("--controllers=*"), "upstream's stack: every default controller, slices too");
  });

  test("apiserver: loopback, RBAC, service CIDR, SA keys; ServiceAccount admission off only without a controller-manager", () => {
    const o = withDefaults({ stateDir: "/state", ports: { apiserver: 7443 } });
    const args = apiserverArgs(o, paths, pki);
    for (const flag of [
      "--bind-address=127.0.0.1",
      "--secure-port=7443",
      "--service-cluster-ip-range=10.96.0.0/16",
      "--client-ca-file=/state/pki/ca.crt",
      "--kubelet-client-certificate=/state/pki/apiserver-kubelet-client.crt",
      "--kubelet-client-key=/state/pki/apiserver-kubelet-client.key",
      "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
      "--kubelet-certificate-authority=/state/pki/ca.crt",
    ]) {
      assert.ok(args.includes(flag), flag);
    }
    assert.ok(args.some((a) => a.startsWith("--authorization-mode=") && a.includes("RBAC")));
    assert.ok(!args.some((a) => a.startsWith("--disable-admission-plugins")));
    const bare = apiserverArgs(withDefaults({ stateDir: "/state", controllerManager: false }), paths, pki);
    assert.ok(bare.includes("--disable-admission-plugins=ServiceAccount"));
  });

  test("extra admission plugins are enabled on top of the defaults, and only when asked for", () => {
    const plain = apiserverArgs(withDefaults({ stateDir: "/state" }), paths, pki);
    assert.ok(!plain.some((a) => a.startsWith("--enable-admission-plugins")));
    const o = withDefaults({
      stateDir: "/state",
      extraAdmissionPlugins: ["OwnerReferencesPermissionEnforcement", "AlwaysPullImages"],
    });
    const args = apiserverArgs(o, paths, pki);
    assert.deepEqual(
      args.filter((a) => a.startsWith("--enable-admission-plugins")),
      ["--enable-admission-plugins=OwnerReferencesPermissionEnforcement,AlwaysPullImages"],
    );
    assert.deepEqual(withDefaults({ stateDir: "/state" }).extraAdmissionPlugins, []);
  });

  test("a lab bridge address moves only the apiserver, which then advertises it and gets real endpoints", () => {
    const o = withDefaults({ stateDir: "/state", apiserverBindAddress: "198.18.0.1" });
    const args = apiserverArgs(o, paths, pki);
    assert.ok(args.includes("--bind-address=198.18.0.1"));
    assert.ok(args.includes("--advertise-address=198.18.0.1"));
    assert.ok(!args.includes("--endpoint-reconciler-type=none"));
    assert.ok(args.includes("--etcd-servers=https://127.0.0.1:2379"), "etcd stays on loopback");
    assert.equal(apiserverUrl(o), "https://198.18.0.1:6443");
    assert.ok(controllerManagerArgs(o, paths, pki).includes("--bind-address=127.0.0.1"));
  });

  test("etcd keeps its data in the state folder and listens where asked, https only", () => {
    const args = etcdArgs(
      withDefaults({ stateDir: "/state", ports: { etcdClient: 3000, etcdPeer: 3001 } }),
      paths,
      pki,
    );
    assert.ok(args.includes("--data-dir=/state/etcd"));
    assert.ok(args.includes("--listen-client-urls=https://127.0.0.1:3000"));
    assert.ok(args.includes("--advertise-client-urls=https://127.0.0.1:3000"));
    assert.ok(args.includes("--initial-cluster=switchyard-lab=https://127.0.0.1:3001"));
    assert.ok(!args.some((a) => a.includes("http://")), args.join(" "));
  });

  test("etcd: mutual TLS for clients and peers, with kubeadm's flags and file names", () => {
    const args = etcdArgs(withDefaults({ stateDir: "/state" }), paths, pki);
    const tls = args.filter((a) =>
      /^--(peer-)?(cert-file|key-file|trusted-ca-file|client-cert-auth)=/.test(a),
    );
    assert.deepEqual(tls, [
      "--cert-file=/state/pki/etcd/server.crt",
      "--key-file=/state/pki/etcd/server.key",
      "--trusted-ca-file=/state/pki/etcd/ca.crt",
      "--client-cert-auth=true",
      "--peer-cert-file=/state/pki/etcd/peer.crt",
      "--peer-key-file=/state/pki/etcd/peer.key",
      "--peer-trusted-ca-file=/state/pki/etcd/ca.crt",
      "--peer-client-cert-auth=true",
    ]);
  });

  test("apiserver reaches etcd over https with kubeadm's apiserver-etcd-client certificate", () => {
    const args = apiserverArgs(withDefaults({ stateDir: "/state" }), paths, pki);
    const etcd = args.filter((a) => a.startsWith("--etcd-"));
    assert.deepEqual(etcd, [
      "--etcd-servers=https://127.0.0.1:2379",
      "--etcd-cafile=/state/pki/etcd/ca.crt",
      "--etcd-certfile=/state/pki/apiserver-etcd-client.crt",
      "--etcd-keyfile=/state/pki/apiserver-etcd-client.key",
    ]);
    const v6 = apiserverArgs(withDefaults({ stateDir: "/state", bindAddress: "::1" }), paths, pki);
    assert.ok(v6.includes("--etcd-servers=https://[::1]:2379"));
  });

  test("first service IP", () => {
    assert.equal(firstServiceIp("10.96.0.0/16"), "10.96.0.1");
    assert.equal(firstServiceIp("fd00:10:96::/112"), "fd00:10:96::1");
  });

  test("a taken port is one line naming the port, the component and the flag", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
    const port = (server.address() as { port: number }).port;
    try {
      await assert.rejects(
        assertPortsFree("127.0.0.1", [{ port, what: "kube-apiserver", flag: "--apiserver-port" }]),
        new RegExp(
          `^Error: port ${port} on 127.0.0.1 \\(kube-apiserver\\) is in use by another process; pick another with --apiserver-port$`,
        ),
      );
    } finally {
      server.close();
    }
  });
});

describe("progress", () => {
  test("in a log, prints on change at most once per interval, and always when forced", () => {
    let t = 0;
    const lines: string[] = [];
    const p = new Progress("build", { write: (s) => lines.push(s) }, () => t, 10_000);
    p.update("a", true);
    t = 1000;
    p.update("b");
    t = 11_000;
    p.update("c");
    p.update("c");
    p.done("finished");
    assert.deepEqual(lines, ["[build] a (0s)\n", "[build] c (11s)\n", "[build] finished in 11s\n"]);
  });
});

describe("lastErrorLine", () => {
  const log = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), "sy-log-")), "component.log");
    writeFileSync(path, text);
    return path;
  };

  test("klog's last error or fatal line, without its header", () => {
    const path = log(
      'I1205 01:42:43.931 1 server.go:1] "starting"\nE1205 01:42:44.001 1 run.go:72] "command failed" err="x"\n',
    );
    assert.equal(lastErrorLine(path), '"command failed" err="x"');
  });

  test("etcd's panic on a full disk as msg: error, not the stack trace after it", () => {
    const path = log(
      [
        '{"level":"warn","ts":"2026-12-05T01:42:43Z","msg":"failed to preallocate an initial WAL file","error":"no space left on device"}',
        '{"level":"panic","ts":"2026-12-05T01:42:43Z","msg":"failed to create WAL","error":"no space left on device","stacktrace":"..."}',
        "panic: failed to create WAL",
        "",
        "goroutine 1 [running]:",
      ].join("\n"),
    );
    assert.equal(lastErrorLine(path), "failed to create WAL: no space left on device");
  });
});

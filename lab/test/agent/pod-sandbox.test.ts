import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import type { Pod } from "kubernetes-types/core/v1.js";
import { execInContainerFor } from "../../src/agent/exec-hook.js";
import { topLevelMounts } from "../../src/agent/host-mounts.js";
import { hostPortCommands, hostPortMappings } from "../../src/agent/host-ports.js";
import { ensureLayer } from "../../src/agent/image-layer.js";
import { nsenterArgv } from "../../src/agent/kubelet-api/exec-in-container.js";
import { etcHosts, fieldValue, podHostname } from "../../src/agent/pod-files.js";
import { probeOnce } from "../../src/agent/probes.js";
import { sandboxArgv } from "../../src/agent/sandbox-command.js";
import type { MountPlan } from "../../src/agent/volumes.js";

describe("the host's top-level mounts (what a container's root binds in)", () => {
  test("children of the topmost / mount (not of one it covers), in order, escapes decoded", () => {
    const mountinfo = [
      "20 1 0:1 / / rw - rootfs rootfs rw",
      "22 20 0:21 / /proc rw,relatime - proc proc rw",
      "27 20 254:0 / / rw,relatime - ext4 /dev/vda rw",
      "28 27 0:22 / /proc rw,relatime - proc proc rw",
      "29 27 0:23 / /dev rw - devtmpfs devtmpfs rw",
      "30 29 0:24 / /dev/pts rw - devpts devpts rw",
      "31 27 254:0 /data /srv/my\\040files rw - ext4 /dev/vda rw",
      "",
    ].join("\n");
    assert.deepEqual(topLevelMounts(mountinfo), ["/proc", "/dev", "/srv/my files"]);
  });
});

describe("hostPort (the portmap plugin's DNAT, in the node's nftables maps)", () => {
  const pod = (ports: object[], hostNetwork = false): Pod => ({
    spec: { hostNetwork, containers: [{ name: "c", ports: ports as never }] },
  });

  test("each hostPort maps the node's address (or any of them), protocol and port to the pod's port", () => {
    const mappings = hostPortMappings(
      pod([
        { containerPort: 8080, hostPort: 54323, hostIP: "127.0.0.1" },
        { containerPort: 8080, hostPort: 54323, hostIP: "0.0.0.0", protocol: "UDP" },
        { containerPort: 9376 },
        { containerPort: 80, hostPort: 8081, hostIP: "fd00::1" },
      ]),
      "10.244.1.5",
    );
    assert.deepEqual(hostPortCommands(mappings), {
      add: [
        "add element ip switchyard-hostports by-address { 127.0.0.1 . tcp . 54323 : 10.244.1.5 . 8080 }",
        "add element ip switchyard-hostports any-address { udp . 54323 : 10.244.1.5 . 8080 }",
      ],
      remove: [
        "delete element ip switchyard-hostports by-address { 127.0.0.1 . tcp . 54323 }",
        "delete element ip switchyard-hostports any-address { udp . 54323 }",
      ],
    });
  });

  test("hostNetwork pods listen on the node's ports themselves", () => {
    assert.deepEqual(hostPortMappings(pod([{ containerPort: 80, hostPort: 80 }], true), "198.18.0.11"), []);
  });
});

describe("the pod's /etc/hosts and hostname, as the kubelet writes them", () => {
  const pod: Pod = {
    metadata: { name: "dns-test-1", namespace: "dns-42" },
    spec: {
      containers: [],
      hostname: "dns-querier-1",
      subdomain: "dns-test-service",
      hostAliases: [{ ip: "1.2.3.4", hostnames: ["foo", "bar"] }],
    },
  };

  test("hostname and subdomain give the FQDN; aliases follow", () => {
    assert.deepEqual(podHostname(pod), {
      hostname: "dns-querier-1",
      domain: "dns-test-service.dns-42.svc.cluster.local",
    });
    assert.equal(
      etcHosts(pod, ["10.244.1.5"], "ignored\n"),
      "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
        "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
        "10.244.1.5\tdns-querier-1.dns-test-service.dns-42.svc.cluster.local\tdns-querier-1\n" +
        "\n# Entries added by HostAliases.\n1.2.3.4\tfoo\tbar\n",
    );
  });

  test("the pod's name otherwise, cut to 63 characters; hostNetwork pods get the node's file", () => {
    const long = `${"a".repeat(62)}-b`;
    assert.deepEqual(podHostname({ metadata: { name: long } }), { hostname: "a".repeat(62), domain: "" });
    const host: Pod = { metadata: { name: "p" }, spec: { containers: [], hostNetwork: true } };
    assert.equal(
      etcHosts(host, [], "127.0.0.1 localhost\n"),
      "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n",
    );
  });
});

describe("downward-API fields in env, as the kubelet resolves them", () => {
  const pod: Pod = {
    metadata: {
      name: "netserver-0",
      namespace: "nettest",
      labels: { b: "2", a: "x y" },
      annotations: { note: "hi" },
    },
    spec: { containers: [], nodeName: "node-1" },
  };
  const ips = { pod: ["10.244.1.5", "fd00:10:244:1::5"], host: ["198.18.0.11", "fd00:198:18::11"] };

  test("the IP lists comma-joined (netexec's --udp-listen-addresses=$(HOST_IP),$(POD_IPS)), the first alone", () => {
    assert.equal(fieldValue(pod, "status.podIPs", ips), "10.244.1.5,fd00:10:244:1::5");
    assert.equal(fieldValue(pod, "status.podIP", ips), "10.244.1.5");
    assert.equal(fieldValue(pod, "status.hostIPs", ips), "198.18.0.11,fd00:198:18::11");
    assert.equal(fieldValue(pod, "spec.nodeName", ips), "node-1");
  });

  test('a label or an annotation by key; all labels as sorted key="value" lines', () => {
    assert.equal(fieldValue(pod, "metadata.labels['a']", ips), "x y");
    assert.equal(fieldValue(pod, "metadata.annotations['note']", ips), "hi");
    assert.equal(fieldValue(pod, "metadata.labels", ips), 'a="x y"\nb="2"');
  });
});

/** Why the sandbox cannot be run here, or undefined. */
function kernelSkip(): string | undefined {
  if (process.getuid?.() !== 0) return "needs root (network and mount namespaces, overlayfs)";
  if (!readFileSync("/proc/filesystems", "utf8").includes("overlay")) return "no overlayfs in this kernel";
  return undefined;
}

describe("a container's root on the real kernel: the image's files over the host's", {
  skip: kernelSkip(),
}, () => {
  const netns = `sy-sbx-${process.pid}`;
  let dir: string;
  let layerDir: string | undefined;
  const hostMarker = join(tmpdir(), `sy-sbx-host-${process.pid}`);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "sy-sandbox-"));
    execFileSync("ip", ["netns", "add", netns]);
    writeFileSync(hostMarker, "the host's\n");
    mkdirSync(join(dir, "volume"));
    writeFileSync(join(dir, "volume", "data"), "from a volume\n");
    writeFileSync(join(dir, "resolv.conf"), "nameserver 10.96.0.10\n");
    writeFileSync(join(dir, "hosts"), "10.244.0.9\tweb-1\n");
    writeFileSync(join(dir, "hostname"), "web-1\n");
    layerDir = ensureLayer(join(dir, "layers"), {
      name: "test",
      entries: [
        { path: "/image-file", copy: join(dir, "hostname") },
        { path: "/usr/local/bin/image-tool", link: "/bin/echo" },
        { path: "/uploads", dir: true },
      ],
    });
  });
  after(() => {
    spawnSync("ip", ["netns", "del", netns]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(hostMarker, { force: true });
  });

  const sandbox = (name: string, argv: string[], extraMounts: MountPlan[] = []) => {
    const rootDir = join(dir, "rootfs", name);
    mkdirSync(rootDir, { recursive: true });
    return sandboxArgv({
      netns,
      hostname: "web-1",
      rootDir,
      layerDir,
      hostMounts: topLevelMounts(readFileSync("/proc/self/mountinfo", "utf8")),
      etc: {
        resolvConf: join(dir, "resolv.conf"),
        hosts: join(dir, "hosts"),
        hostname: join(dir, "hostname"),
      },
      serviceAccountDir: undefined,
      workingDir: "/srv/work",
      argv,
      mounts: [
        { source: join(dir, "volume"), target: "/var/run/data", readOnly: true, file: false },
        ...extraMounts,
      ],
    });
  };
  const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
  const run = (name: string, script: string, extraMounts: MountPlan[] = []) => {
    const [bin = "", ...args] = sandbox(name, ["sh", "-c", script], extraMounts);
    return spawnSync(bin, args, { encoding: "utf8", env });
  };

  test("the image's files and programs, the host's beside them, the pod's files, the volume read-only", () => {
    const r = run(
      "c1",
      `cat /image-file; image-tool from the image; cat ${hostMarker}; cat /etc/resolv.conf /etc/hosts; hostname; pwd; ` +
        "cat /var/run/data/data; test -d /uploads && echo uploads; touch /var/run/data/x 2>/dev/null || echo read-only",
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout,
      "web-1\nfrom the image\nthe host's\nnameserver 10.96.0.10\n10.244.0.9\tweb-1\nweb-1\n/srv/work\n" +
        "from a volume\nuploads\nread-only\n",
    );
  });

  test("/sys is the pod network's; a hostPath under the host's /sys (the BPF file system) is the host's", () => {
    const hostBpffs = /^\S+ \S+ \S+ \S+ \/sys\/fs\/bpf .* - bpf /m.test(
      readFileSync("/proc/self/mountinfo", "utf8"),
    );
    const bpf: MountPlan[] = hostBpffs
      ? [{ source: "/sys/fs/bpf", target: "/sys/fs/bpf", readOnly: false, file: false }]
      : [];
    const r = run("c6", "stat -f -c %T /sys /sys/fs/bpf; ls /sys/class/net", bpf);
    assert.equal(r.status, 0, r.stderr);
    // A new network namespace has only its loopback; the host's links would show here with the host's /sys.
    assert.equal(r.stdout, `sysfs\n${hostBpffs ? "bpf_fs" : "sysfs"}\nlo\n`);
  });

  test("what the container writes stays in its root: the host's files are untouched", () => {
    const r = run("c2", `echo changed >${hostMarker}; mkdir -p /opt/written; cat ${hostMarker}`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "changed\n");
    assert.equal(readFileSync(hostMarker, "utf8"), "the host's\n");
    assert.equal(existsSync("/opt/written"), false);
    assert.equal(existsSync("/srv/work"), false, "the working dir was made in the container's root");
  });

  test("a program the root does not have fails as runc's exec does", () => {
    const [bin = "", ...args] = sandbox("c3", ["no-such-program"]);
    const r = spawnSync(bin, args, { encoding: "utf8", env });
    assert.equal(r.status, 128);
    assert.match(r.stderr, /exec: "no-such-program": executable file not found in \$PATH/);
  });

  test("an exec probe and an exec hook run inside the container: exit 0 passes, anything else fails", async () => {
    const [bin = "", ...args] = sandbox("c5", ["sleep", "30"]);
    const child = spawn(bin, args, { env, stdio: "ignore" });
    try {
      const pid = child.pid ?? 0;
      const probe = (command: string[]) =>
        probeOnce({ exec: { command }, timeoutSeconds: 2 }, "127.0.0.1", { name: "c" }, pid);
      await eventually("the image's program passes", async () =>
        (await probe(["image-tool"])) === "success" ? true : undefined,
      );
      assert.equal(await probe(["sh", "-c", "test -d /uploads"]), "success");
      assert.equal(await probe(["/bin/false"]), "failure");
      assert.equal(await probe(["sh", "-c", `test -e ${hostMarker}.nope`]), "failure");
      assert.equal(await execInContainerFor(pid, ["sleep", "5"], 200), undefined, "killed at its timeout");
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("exec enters the container's root: the image's programs by name", async () => {
    const [bin = "", ...args] = sandbox("c4", ["sleep", "30"]);
    const child = spawn(bin, args, { env, stdio: "ignore" });
    try {
      const pid = child.pid ?? 0;
      const seen = await eventually("the container's process in its root", () => {
        const r = spawnSync(
          nsenterArgv(pid, ["image-tool", "ok"])[0] ?? "",
          nsenterArgv(pid, ["image-tool", "ok"]).slice(1),
          {
            encoding: "utf8",
            env,
          },
        );
        return r.status === 0 ? r.stdout : undefined;
      });
      assert.equal(seen, "ok\n");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

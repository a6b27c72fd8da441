import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Pod, PodCondition } from "kubernetes-types/core/v1.js";
import { imageName, resolveImage } from "../../src/agent/images.js";
import { Ipam } from "../../src/agent/ipam.js";
import { resolvConf } from "../../src/agent/pod-files.js";
import { podStatus } from "../../src/agent/pod-status.js";
import { sandboxArgv } from "../../src/agent/sandbox-command.js";
import { limitMounts } from "../../src/netns/limit-places.js";
import { defaultLabInput, networksFor, planLab } from "../../src/netns/plan.js";
import {
  bridgeSteps,
  ebpfPlaceSteps,
  nodeSteps,
  podRouteSteps,
  podSandboxSteps,
} from "../../src/netns/steps.js";
import { teardown } from "../../src/netns/teardown.js";
import { repoRoot } from "../../src/self.js";

const plan = planLab({ ...defaultLabInput, nodes: 3, zones: 2 });

describe("lab plan", () => {
  test("nodes get names, zones round-robin, addresses after the bridge's", () => {
    assert.equal(plan.gateway, "198.18.0.1");
    assert.equal(plan.dnsIp, "10.96.0.10");
    assert.deepEqual(
      plan.nodeList.map((n) => [n.name, n.zone, n.ip, n.netns, n.hostVeth]),
      [
        ["node-1", "zone-a", "198.18.0.11", "sy-node-1", "sy-n1"],
        ["node-2", "zone-b", "198.18.0.12", "sy-node-2", "sy-n2"],
        ["node-3", "zone-a", "198.18.0.13", "sy-node-3", "sy-n3"],
      ],
    );
  });

  test("bad input fails in one line", () => {
    assert.throws(() => planLab({ ...defaultLabInput, prefix: "Too-Long-Prefix" }), /prefix/);
    assert.throws(() => planLab({ ...defaultLabInput, nodes: 0 }), /--nodes/);
  });

  test("each pod CIDR is routed via its node from the root namespace (journaled) and from the other nodes", () => {
    const cidrs = new Map(plan.nodeList.map((n, i) => [n.name, `10.244.${i}.0/24`]));
    const steps = podRouteSteps(plan, cidrs);
    const root = steps.filter((s) => s.undo);
    assert.deepEqual(
      root.map((s) => s.argv.join(" ")),
      ["10.244.0.0/24 via 198.18.0.11", "10.244.1.0/24 via 198.18.0.12", "10.244.2.0/24 via 198.18.0.13"].map(
        (r) => `ip route replace ${r}`,
      ),
    );
    assert.ok(
      steps.some((s) => s.argv.join(" ") === "ip -n sy-node-2 route replace 10.244.0.0/24 via 198.18.0.11"),
    );
    assert.ok(
      !steps.some((s) => s.argv.join(" ") === "ip -n sy-node-1 route replace 10.244.0.0/24 via 198.18.0.11"),
    );
  });
});

describe("lab plan: ebpf mode's places", () => {
  const hybrid = planLab({ ...defaultLabInput, nodes: 2, prefix: "lab2" }, "/sys/fs/cgroup/unified");

  test("each node has a cgroup and a pin folder of its own below the lab's, none without a cgroup2 mount", () => {
    assert.deepEqual(
      hybrid.nodeList.map((n) => [n.cgroup, n.pinRoot]),
      [
        ["/sys/fs/cgroup/unified/switchyard/lab2/node-1", "/sys/fs/bpf/switchyard/lab2/node-1"],
        ["/sys/fs/cgroup/unified/switchyard/lab2/node-2", "/sys/fs/bpf/switchyard/lab2/node-2"],
      ],
    );
    assert.equal(plan.ebpf, undefined);
    assert.ok(plan.nodeList.every((n) => n.cgroup === undefined && n.pinRoot === undefined));
    assert.deepEqual(ebpfPlaceSteps(plan), []);
  });

  test("steps: the cgroups undone as cgroups (their processes stopped first), the pins removed, shared folders only when empty", () => {
    const steps = ebpfPlaceSteps(hybrid);
    assert.deepEqual(
      steps.map((s) => [s.argv.join(" "), s.undo]),
      [
        [
          "mkdir -p /sys/fs/cgroup/unified/switchyard",
          {
            kind: "cmd",
            argv: ["rmdir", "--ignore-fail-on-non-empty", "/sys/fs/cgroup/unified/switchyard"],
          },
        ],
        [
          "mkdir -p /sys/fs/cgroup/unified/switchyard/lab2",
          { kind: "cgroup", path: "/sys/fs/cgroup/unified/switchyard/lab2" },
        ],
        [
          "mkdir -p /sys/fs/cgroup/unified/switchyard/lab2/node-1",
          { kind: "cgroup", path: "/sys/fs/cgroup/unified/switchyard/lab2/node-1" },
        ],
        [
          "mkdir -p /sys/fs/cgroup/unified/switchyard/lab2/node-2",
          { kind: "cgroup", path: "/sys/fs/cgroup/unified/switchyard/lab2/node-2" },
        ],
        [
          "mkdir -p /sys/fs/bpf/switchyard",
          { kind: "cmd", argv: ["rmdir", "--ignore-fail-on-non-empty", "/sys/fs/bpf/switchyard"] },
        ],
        [
          "mkdir -p /sys/fs/bpf/switchyard/lab2",
          { kind: "cmd", argv: ["rm", "-rf", "/sys/fs/bpf/switchyard/lab2"] },
        ],
      ],
    );
  });

  test("teardown stops a cgroup's processes, then removes it; a cgroup already gone is fine", async () => {
    const ran: string[] = [];
    const killed: string[] = [];
    let procs = "77\n78\n";
    const exec = async (argv: readonly string[]) => {
      ran.push(argv.join(" "));
      if (argv[1] === "/cg/gone") throw new Error("find: '/cg/gone': No such file or directory");
      return argv.includes("cgroup.procs") ? procs : "";
    };
    const result = await teardown(
      [
        { kind: "cgroup", path: "/cg/gone" },
        { kind: "cgroup", path: "/cg/node-1" },
      ],
      {
        exec,
        kill: (pid, sig) => {
          killed.push(`${pid} ${sig}`);
          if (sig === "SIGKILL") procs = "";
        },
        sleep: async () => {},
        graceMs: 200,
      },
    );
    assert.deepEqual(killed, ["77 SIGTERM", "78 SIGTERM", "77 SIGKILL", "78 SIGKILL"]);
    // The node's directory and those below it (pods', the system leaf), deepest first.
    assert.equal(ran.at(-2), "find /cg/node-1 -depth -type d -exec rmdir {} ;");
    assert.equal(ran.at(-1), "find /cg/gone -name cgroup.procs -exec cat {} +");
    assert.deepEqual(result.undone, ["cgroup /cg/node-1"]);
    assert.deepEqual(result.errors, []);
  });
});

describe("lab plan: where pods' limits go", () => {
  // This machine's mountinfo, abridged: cgroup v1 controllers beside a cgroup2 with none to give.
  const hybridInfo = [
    "30 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
    "31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
    "32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct",
    "34 30 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
    "40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  ].join("\n");

  test("a hybrid host: the v1 memory and cpu hierarchies; a cgroup2-only one: cgroup2; neither: none", () => {
    assert.deepEqual(limitMounts(hybridInfo, "hugetlb\n"), {
      kind: "v1",
      memory: "/sys/fs/cgroup/memory",
      cpu: "/sys/fs/cgroup/cpu",
    });
    const combined = "31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct";
    assert.equal(limitMounts(`${hybridInfo}\n${combined}`, "")?.kind, "v1");
    assert.deepEqual(
      limitMounts("40 30 0:36 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", "cpuset cpu io memory pids"),
      {
        kind: "cgroup2",
      },
    );
    assert.equal(limitMounts("40 30 0:36 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", "pids"), undefined);
  });

  test("each node's limits below the lab's folder in each v1 hierarchy, made and removed with the lab", () => {
    const v1 = planLab({ ...defaultLabInput, nodes: 1, prefix: "lab3" }, "/sys/fs/cgroup/unified", {
      kind: "v1",
      memory: "/sys/fs/cgroup/memory",
      cpu: "/sys/fs/cgroup/cpu",
    });
    assert.deepEqual(v1.nodeList[0]?.limits, {
      memory: "/sys/fs/cgroup/memory/switchyard/lab3/node-1",
      cpu: "/sys/fs/cgroup/cpu/switchyard/lab3/node-1",
    });
    const undos = ebpfPlaceSteps(v1).map((s) => s.undo);
    assert.deepEqual(undos.slice(-4), [
      { kind: "cmd", argv: ["rmdir", "--ignore-fail-on-non-empty", "/sys/fs/cgroup/memory/switchyard"] },
      { kind: "cgroup", path: "/sys/fs/cgroup/memory/switchyard/lab3" },
      { kind: "cmd", argv: ["rmdir", "--ignore-fail-on-non-empty", "/sys/fs/cgroup/cpu/switchyard"] },
      { kind: "cgroup", path: "/sys/fs/cgroup/cpu/switchyard/lab3" },
    ]);
    const v2 = planLab({ ...defaultLabInput, nodes: 1, prefix: "lab3" }, "/sys/fs/cgroup", {
      kind: "cgroup2",
    });
    const node = v2.nodeList[0];
    assert.deepEqual(node?.limits, { memory: node?.cgroup, cpu: node?.cgroup });
    assert.equal(v2.v1Limits, undefined);
    // No cgroup2 and BPF file system: no per-pod cgroups, so no limits either.
    const none = planLab({ ...defaultLabInput, nodes: 1 }, undefined, { kind: "cgroup2" });
    assert.equal(none.nodeList[0]?.limits, undefined);
  });
});

describe("lab plan in IPv6 and dual-stack", () => {
  const dual = planLab({ ...defaultLabInput, ipFamily: "dual", ...networksFor("dual"), nodes: 2 });

  test("dual: every node has an address per family, IPv4 first; the primary family serves the apiserver and DNS", () => {
    assert.deepEqual(
      dual.networks.map((n) => [n.family, n.gateway, n.prefixLength]),
      [
        ["IPv4", "198.18.0.1", 24],
        ["IPv6", "fd00:198:18::1", 64],
      ],
    );
    assert.equal(dual.gateway, "198.18.0.1");
    assert.deepEqual(dual.nodeList[0]?.ips, ["198.18.0.11", "fd00:198:18::b"]);
    assert.equal(dual.nodeList[0]?.ip, "198.18.0.11");
    assert.equal(dual.dnsIp, "10.96.0.10");
    assert.equal(dual.serviceCidr, "10.96.0.0/16,fd00:10:96::/112");
  });

  test("ipv6: IPv6 alone, kube-dns the tenth address of the IPv6 service range", () => {
    const v6 = planLab({ ...defaultLabInput, ipFamily: "ipv6", ...networksFor("ipv6") });
    assert.equal(v6.gateway, "fd00:198:18::1");
    assert.deepEqual(v6.nodeList[2]?.ips, ["fd00:198:18::d"]);
    assert.equal(v6.dnsIp, "fd00:10:96::a");
  });

  test("ranges that do not match the families fail in one line naming the flag", () => {
    assert.throws(
      () =>
        planLab({
          ...defaultLabInput,
          ipFamily: "dual",
          ...networksFor("dual"),
          clusterCidr: "10.244.0.0/16",
        }),
      /^Error: --cluster-cidr 10\.244\.0\.0\/16: --ip-family dual wants an IPv4 and an IPv6 range/,
    );
    assert.throws(
      () => planLab({ ...defaultLabInput, serviceCidr: "fd00:10:96::/112" }),
      /--service-cidr fd00:10:96::\/112: --ip-family ipv4 wants one IPv4 range/,
    );
    assert.throws(
      () => planLab({ ...defaultLabInput, nodeCidr: "198.18.0.0/33" }),
      /not a CIDR: 198\.18\.0\.0\/33/,
    );
  });

  test("steps: both addresses (IPv6 without duplicate address detection), a default route and forwarding per family", () => {
    const node = dual.nodeList[0];
    assert.ok(node);
    const lines = nodeSteps(dual, node).map((s) => s.argv.join(" "));
    assert.ok(lines.includes("ip -n sy-node-1 addr add 198.18.0.11/24 dev eth0"));
    assert.ok(lines.includes("ip -n sy-node-1 addr add fd00:198:18::b/64 nodad dev eth0"));
    assert.ok(lines.includes("ip -n sy-node-1 -6 route add default via fd00:198:18::1"));
    assert.ok(lines.includes("ip netns exec sy-node-1 sysctl -qw net.ipv6.conf.all.forwarding=1"));
    const bridge = bridgeSteps(dual).map((s) => s.argv.join(" "));
    assert.ok(bridge.includes("ip addr add fd00:198:18::1/64 nodad dev sy-lab0"));
    const routes = podRouteSteps(
      dual,
      new Map([
        ["node-1", "10.244.0.0/24,fd00:10:244::/64"],
        ["node-2", "10.244.1.0/24,fd00:10:244:1::/64"],
      ]),
    );
    assert.ok(
      routes.some(
        (s) => s.argv.join(" ") === "ip route replace fd00:10:244:1::/64 via fd00:198:18::c" && s.undo,
      ),
    );
    assert.ok(
      routes.some((s) => s.argv.join(" ") === "ip -n sy-node-1 route replace 10.244.1.0/24 via 198.18.0.12"),
    );
    const sandbox = podSandboxSteps({
      node,
      netns: "sy-pod-n1-abc",
      hostVeth: "vethabc",
      addresses: [
        { ip: "10.244.0.2", prefixLength: 24, gateway: "10.244.0.1" },
        { ip: "fd00:10:244::2", prefixLength: 64, gateway: "fd00:10:244::1" },
      ],
    }).map((s) => s.argv.join(" "));
    assert.ok(sandbox.includes("ip -n sy-pod-n1-abc addr add fd00:10:244::2/64 nodad dev eth0"));
    assert.ok(sandbox.includes("ip -n sy-pod-n1-abc -6 route add default via fd00:10:244::1"));
    assert.ok(sandbox.includes("ip -n sy-pod-n1-abc route add default via 10.244.0.1"));
  });

  test("IPv6 pod addresses: the /64's first is the gateway, then in turn, freed ones not reused at once", () => {
    const ipam = new Ipam("fd00:10:244:1::/64");
    assert.equal(ipam.gateway, "fd00:10:244:1::1");
    assert.equal(ipam.prefixLength, 64);
    const a = ipam.allocate();
    assert.equal(a, "fd00:10:244:1::2");
    ipam.release(a);
    assert.equal(ipam.allocate(), "fd00:10:244:1::3");
  });
});

describe("teardown", () => {
  test("newest first; processes in a namespace are stopped before it goes; objects already gone are fine", async () => {
    const ran: string[] = [];
    const killed: string[] = [];
    let alive = true;
    const exec = async (argv: readonly string[]) => {
      ran.push(argv.join(" "));
      if (argv[2] === "pids") return alive ? "4242\n" : "";
      if (argv.includes("sy-gone")) throw new Error("ip link del sy-gone: Cannot find device");
      return "";
    };
    const result = await teardown(
      [
        { kind: "cmd", argv: ["ip", "link", "del", "sy-gone"] },
        { kind: "netns", name: "sy-node-1" },
      ],
      {
        exec,
        kill: (pid, sig) => {
          killed.push(`${pid} ${sig}`);
          alive = false;
        },
        sleep: async () => {},
        graceMs: 1000,
      },
    );
    assert.deepEqual(killed, ["4242 SIGTERM"]);
    assert.deepEqual(ran, [
      "ip netns pids sy-node-1",
      "ip netns pids sy-node-1",
      "ip netns pids sy-node-1",
      "ip netns del sy-node-1",
      "ip link del sy-gone",
    ]);
    assert.deepEqual(result.errors, []);
  });
});

describe("teardown of pods that take their time", () => {
  test("processes in several namespaces get SIGTERM together and share one grace period", async () => {
    // Two DNS pods in lameduck: each leaves 5 s after its SIGTERM. One after the other that was 10 s of `down`.
    let now = 0;
    const termAt = new Map<number, number>();
    const pidsOf: Record<string, number> = { "sy-pod-a": 11, "sy-pod-b": 12 };
    const alive = (pid: number) => !termAt.has(pid) || now < (termAt.get(pid) ?? 0) + 5000;
    const exec = async (argv: readonly string[]) => {
      const pid = pidsOf[argv[3] ?? ""];
      return argv[2] === "pids" && pid && alive(pid) ? `${pid}\n` : "";
    };
    const killed: string[] = [];
    const result = await teardown(
      [
        { kind: "netns", name: "sy-pod-a" },
        { kind: "netns", name: "sy-pod-b" },
      ],
      {
        exec,
        kill: (pid, sig) => {
          killed.push(`${pid} ${sig}`);
          if (!termAt.has(pid)) termAt.set(pid, now);
        },
        sleep: async (ms) => {
          now += ms;
        },
        graceMs: 10_000,
      },
    );
    assert.deepEqual(killed.sort(), ["11 SIGTERM", "12 SIGTERM"]);
    assert.equal(now, 5000, "one lameduck's wait, not two");
    assert.deepEqual(result.undone, ["netns sy-pod-b", "netns sy-pod-a"]);
  });
});

describe("node agent, pure parts", () => {
  const ctx = { repoRoot, echo: ["node", "echo.js"], node: "node" };

  test("images: pause runs nothing, echo runs the echo server, apps run their bin, anything else is unknown", () => {
    assert.equal(imageName("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause");
    assert.equal(imageName("localhost:5000/x@sha256:ab"), "localhost:5000/x");
    assert.deepEqual(resolveImage({ name: "p", image: "registry.k8s.io/pause:3.10" }, ctx), { kind: "none" });
    assert.deepEqual(resolveImage({ name: "e", image: "switchyard/echo", args: ["--tcp-port=1"] }, ctx), {
      kind: "process",
      argv: ["node", "echo.js", "--tcp-port=1"],
    });
    const app = resolveImage(
      { name: "c", image: "switchyard/slice-controller:0.1.0", args: ["--leader-elect"] },
      ctx,
    );
    assert.equal(app.kind, "process");
    assert.match(app.kind === "process" ? (app.argv[1] ?? "") : "", /apps\/slice-controller\/bin\/.+\.js$/);
    assert.deepEqual(resolveImage({ name: "n", image: "example.com/web" }, ctx), {
      kind: "unknown",
      message: "image example.com/web is not known to the switchyard lab runtime",
    });
  });

  test("images: kubeadm's kube-proxy and CoreDNS are packages/testbed/upstream's binaries where the images have them", () => {
    const bins: Record<string, string> = { "kube-proxy": "/cache/kube-proxy", coredns: "/cache/coredns" };
    const up = { ...ctx, upstream: (name: string) => bins[name] };
    const proxy = {
      name: "kube-proxy",
      image: "registry.k8s.io/kube-proxy:v1.37.2",
      command: [
        "/usr/local/bin/kube-proxy",
        "--config=/var/lib/kube-proxy/config.conf",
        "--hostname-override=$(NODE_NAME)",
      ],
    };
    assert.deepEqual(resolveImage(proxy, up, { NODE_NAME: "node-1" }), {
      kind: "process",
      argv: [
        "/usr/local/bin/kube-proxy",
        "--config=/var/lib/kube-proxy/config.conf",
        "--hostname-override=node-1",
      ],
      layer: {
        name: "kube-proxy",
        entries: [{ path: "/usr/local/bin/kube-proxy", link: "/cache/kube-proxy" }],
      },
    });
    const dns = {
      name: "coredns",
      image: "registry.k8s.io/coredns/coredns:v1.14.6",
      args: ["-conf", "/etc/coredns/Corefile"],
    };
    assert.deepEqual(resolveImage(dns, up), {
      kind: "process",
      argv: ["/coredns", "-conf", "/etc/coredns/Corefile"],
      layer: { name: "coredns", entries: [{ path: "/coredns", link: "/cache/coredns" }] },
    });
    assert.deepEqual(resolveImage(dns, ctx), {
      kind: "unknown",
      message:
        "image registry.k8s.io/coredns/coredns:v1.14.6 runs the coredns binary of packages/testbed/upstream, which is missing (npx switchyard-lab upstream build --only coredns)",
    });
  });

  test("resolv.conf follows the DNS policy", () => {
    const pod = (spec: Partial<NonNullable<Pod["spec"]>>): Pod => ({
      metadata: { namespace: "shop" },
      spec: { containers: [], ...spec },
    });
    assert.equal(
      resolvConf(pod({}), plan, "host\n"),
      "nameserver 10.96.0.10\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
    );
    assert.equal(resolvConf(pod({ hostNetwork: true }), plan, "host\n"), "host\n");
    assert.match(
      resolvConf(pod({ hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" }), plan, ""),
      /10\.96/,
    );
  });

  test("pod IPs: the gateway and the network address are never handed out; freed ones come back in turn", () => {
    const ipam = new Ipam("10.244.3.0/24");
    assert.equal(ipam.gateway, "10.244.3.1");
    assert.equal(ipam.allocate(), "10.244.3.2");
    assert.equal(ipam.allocate(), "10.244.3.3");
    ipam.release("10.244.3.2");
    // Not at once (the old pod's MAC is still in ARP caches): after the rest of the range, as host-local does.
    assert.equal(ipam.allocate(), "10.244.3.4");
    const small = new Ipam("10.244.4.0/29");
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => small.allocate()),
      ["10.244.4.2", "10.244.4.3", "10.244.4.4", "10.244.4.5", "10.244.4.6"],
    );
    small.release("10.244.4.3");
    assert.equal(small.allocate(), "10.244.4.3");
    assert.throws(() => small.allocate(), /no free pod address left in 10\.244\.4\.0\/29/);
  });

  test("addresses a previous agent handed out are reserved before new pods ask; others' are ignored", () => {
    const ipam = new Ipam("10.244.5.0/29");
    for (const ip of ["10.244.5.2", "10.244.5.4", "10.244.6.2", "fd00::2", "10.244.5.1"]) ipam.reserve(ip);
    assert.deepEqual(
      [1, 2, 3].map(() => ipam.allocate()),
      ["10.244.5.3", "10.244.5.5", "10.244.5.6"],
    );
    assert.throws(() => ipam.allocate(), /no free pod address left/);
  });

  test("the sandbox command enters the namespace, builds the root, mounts the pod's files, then execs the container", () => {
    const argv = sandboxArgv({
      netns: "sy-pod-n1-abc",
      hostname: "web-1",
      rootDir: "/s/rootfs/web",
      layerDir: "/lab/images/agnhost-0123",
      hostMounts: ["/proc", "/sys", "/dev"],
      etc: { resolvConf: "/s/resolv.conf", hosts: "/s/hosts", hostname: "/s/hostname" },
      serviceAccountDir: "/s/sa",
      argv: ["node", "echo.js"],
    });
    // nsenter joins the network namespace only: `ip netns exec` would mount a /sys of its own over the host's.
    assert.deepEqual(argv.slice(0, 2), ["nsenter", "--net=/run/netns/sy-pod-n1-abc"]);
    assert.deepEqual(argv.slice(-3), ["sandbox", "node", "echo.js"]);
    const script = argv[argv.indexOf("-c") + 1] ?? "";
    const order = [
      "cp -a '/lab/images/agnhost-0123/.' '/s/rootfs/web/upper/'",
      "mount -t overlay sy-root -o 'lowerdir=/,upperdir=/s/rootfs/web/upper,workdir=/s/rootfs/web/work'",
      "mount --rbind '/proc' '/s/rootfs/web/root/proc'",
      "mount -t sysfs sysfs '/s/rootfs/web/root/sys'",
      "pivot_root . '.sy-host'",
      "mount --bind '/.sy-host/s/resolv.conf' '/etc/resolv.conf'",
      "mount --bind -o ro '/.sy-host/s/sa' '/run/secrets/kubernetes.io/serviceaccount'",
      "umount -l /.sy-host",
      'exec "$@"',
    ].map((line) => script.indexOf(line));
    assert.ok(!order.includes(-1), script);
    assert.ok(!script.includes("--rbind '/sys'"), "the host's /sys (its cgroup2 and BPF mounts) stays out");
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
    );
  });

  test("pod status: readiness gates hold Ready back in the kubelet's words; others' conditions are kept", () => {
    const gated = (conditions: PodCondition[]): Pod => ({
      metadata: { name: "p" },
      spec: { containers: [], readinessGates: [{ conditionType: "example.com/blue" }] },
      status: { conditions },
    });
    const view = {
      hostIps: ["198.18.0.11"],
      podIps: ["10.244.0.2"],
      startTime: "2024-01-01T00:00:00Z",
      sandboxReady: true,
      containers: [
        { name: "c", image: "i", state: { running: {} }, lastState: {}, restartCount: 0, ready: true },
      ],
    };
    const now = new Date("2024-01-01T00:00:05Z");
    const ready = (p: Pod) => podStatus(p, view, now).conditions?.find((c) => c.type === "Ready");
    assert.deepEqual(ready(gated([])), {
      type: "Ready",
      status: "False",
      lastTransitionTime: "2024-01-01T00:00:05Z",
      reason: "ReadinessGatesNotReady",
      message: 'corresponding condition of pod readiness gate "example.com/blue" does not exist.',
    });
    const off = { type: "example.com/blue", status: "False" as const };
    assert.equal(
      ready(gated([off]))?.message,
      'the status of pod readiness gate "example.com/blue" is not "True", but False',
    );
    const on = gated([{ type: "example.com/blue", status: "True" }]);
    assert.equal(ready(on)?.status, "True");
    assert.ok(
      podStatus(on, view, now).conditions?.some((c) => c.type === "example.com/blue" && c.status === "True"),
    );
  });

  test("pod status: Ready only when every container is; a crash loop is still Running", () => {
    const pod: Pod = { metadata: { name: "p" }, spec: { containers: [] } };
    const view = (ready: boolean, state: object, lastState: object = {}) => ({
      hostIps: ["198.18.0.11"],
      podIps: ["10.244.0.2"],
      startTime: "2024-01-01T00:00:00Z",
      sandboxReady: true,
      containers: [{ name: "c", image: "i", state, lastState, restartCount: 0, ready }],
    });
    const now = new Date("2024-01-01T00:00:05Z");
    const ok = podStatus(pod, view(true, { running: {} }), now);
    assert.equal(ok.phase, "Running");
    assert.equal(ok.conditions?.find((c) => c.type === "Ready")?.status, "True");
    const crashed = { terminated: { exitCode: 1, reason: "Error" } };
    const crashing = podStatus(pod, view(false, { waiting: { reason: "CrashLoopBackOff" } }, crashed), now);
    assert.equal(crashing.phase, "Running");
    assert.equal(crashing.conditions?.find((c) => c.type === "Ready")?.status, "False");
  });
});

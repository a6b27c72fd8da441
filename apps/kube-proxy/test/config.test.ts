// Flags and KubeProxyConfiguration files: kubeadm's file (full of zero values) gives the
// defaults; unknown and duplicate fields decode leniently (reported); bad values fail naming the field; with --config only
// --hostname-override and --v still apply, as upstream.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Logger } from "@switchyard/kube";
import { runMain } from "@switchyard/kube/testing";
import { FlagError, ignoredWithConfig, notActedOn, parseCommandLine } from "../src/cli/flags.js";
import { resolve } from "../src/config/config.js";
import { ConfigError, parseConfigFile, strictDecodingError } from "../src/config/config-file.js";
import { applyOomScoreAdj, loadConfiguration, main } from "../src/main.js";
import { KUBEADM } from "./kubeadm-config.js";

test("kubeadm's file decodes to upstream's defaults", () => {
  const o = resolve(parseConfigFile(KUBEADM));
  assert.equal(o.mode, "iptables");
  assert.equal(o.metricsBindAddress, "127.0.0.1:10249");
  assert.equal(o.healthzBindAddress, "0.0.0.0:10256");
  assert.equal(o.minSyncPeriodMs, 1000);
  assert.equal(o.syncPeriodMs, 30_000);
  assert.equal(o.masqueradeBit, 14);
  assert.equal(o.localhostNodePorts, true);
  assert.equal(o.kubeconfig, "/var/lib/kube-proxy/kubeconfig.conf");
  assert.deepEqual(o.clusterCIDRs, ["10.244.0.0/16"]);
});

test("the mode's own section applies", () => {
  const text = KUBEADM.replace('mode: ""', "mode: nftables").replace(
    "nftables:\n  masqueradeAll: false\n  masqueradeBit: null\n  minSyncPeriod: 0s\n  syncPeriod: 0s",
    "nftables:\n  masqueradeAll: true\n  masqueradeBit: 5\n  minSyncPeriod: 250ms\n  syncPeriod: 1m",
  );
  const o = resolve(parseConfigFile(text));
  assert.deepEqual(
    [o.mode, o.masqueradeAll, o.masqueradeBit, o.minSyncPeriodMs, o.syncPeriodMs],
    ["nftables", true, 5, 250, 60_000],
  );
});

test("unknown and duplicate fields: decoded leniently and reported, as upstream (options.go loadConfig)", () => {
  // Upstream v1.37.2 decodes strictly, and when that fails only for strictness decodes again leniently, logs
  // "Using lenient decoding as strict decoding failed" and runs: unknown fields dropped, a duplicate's last value.
  const strictOk: string[] = [];
  const base = resolve(parseConfigFile(KUBEADM, strictOk));
  assert.deepEqual(strictOk, [], "kubeadm's own file decodes strictly");
  assert.equal(strictDecodingError(strictOk), undefined);

  const typo: string[] = [];
  const withTypos = KUBEADM.replace("bindAddress: 0.0.0.0", "bindAdress: 0.0.0.0").replace(
    "  strictARP: false",
    "  strictARP: false\n  bogus: 1",
  );
  const o = resolve(parseConfigFile(withTypos, typo));
  assert.deepEqual(typo, ['unknown field "bindAdress"', 'unknown field "ipvs.bogus"']);
  assert.equal(
    strictDecodingError(typo),
    'strict decoding error: unknown field "bindAdress", unknown field "ipvs.bogus"',
  );
  assert.deepEqual(o, base, "the rest of the file as without the unknown fields (bindAddress defaults)");

  const dup: string[] = [];
  const twice = resolve(parseConfigFile(`${KUBEADM}mode: nftables\n`, dup));
  assert.deepEqual(dup, ['duplicate field "mode"']);
  assert.equal(twice.mode, "nftables", "the last value wins");
});

test("mode ebpf (ours, not upstream's): from the file or the flag, on nftables' sync periods, paths by flag", () => {
  const file = resolve(parseConfigFile(KUBEADM.replace('mode: ""', "mode: ebpf"), []));
  assert.equal(file.mode, "ebpf");
  assert.deepEqual(file.ebpf, {
    cgroupRoot: "",
    bpfRoot: "",
    devices: [],
    lbMapMax: 65_536,
    lbAcceleration: "disabled",
  });
  const argv = [
    "--proxy-mode=ebpf",
    "--nftables-min-sync-period=250ms",
    "--cgroup-root=/cg",
    "--bpf-root=/bpf",
    "--devices=eth0,eth1",
    "--bpf-lb-map-max=262144",
    "--bpf-lb-acceleration=best-effort",
  ];
  const flags = resolve(loadConfiguration(parseCommandLine(argv), () => ""));
  assert.equal(flags.mode, "ebpf");
  assert.equal(flags.minSyncPeriodMs, 250);
  assert.deepEqual(flags.ebpf, {
    cgroupRoot: "/cg",
    bpfRoot: "/bpf",
    devices: ["eth0", "eth1"],
    lbMapMax: 262_144,
    lbAcceleration: "best-effort",
  });
  assert.throws(() => parseCommandLine(["--bpf-lb-map-max=0"]), FlagError);
  // The file has no field for the paths, so the flags apply beside it.
  const both = resolve(
    loadConfiguration(parseCommandLine(["--config=/kp.yaml", "--bpf-root=/bpf"]), () => KUBEADM),
  );
  assert.equal(both.ebpf.bpfRoot, "/bpf");
});

test("--bpf-lb-acceleration (Cilium's): each of its values, the file's mode kept, a bad value one line", () => {
  for (const value of ["disabled", "native", "best-effort"] as const) {
    const argv = ["--config=/kp.yaml", `--bpf-lb-acceleration=${value}`];
    const o = resolve(
      loadConfiguration(parseCommandLine(argv), () => KUBEADM.replace('mode: ""', "mode: ebpf")),
    );
    assert.equal(o.ebpf.lbAcceleration, value);
  }
  assert.throws(
    () => parseCommandLine(["--bpf-lb-acceleration=generic"]),
    (e: unknown) =>
      e instanceof FlagError &&
      !e.message.includes("\n") &&
      /bpf-lb-acceleration/.test(e.message) &&
      /want disabled, native or best-effort/.test(e.message),
  );
});

test("bad values and bad files name the field and fail", () => {
  // Decoding names the field of a value of the wrong type; upstream's validation words the rest.
  const load = (text: string) => loadConfiguration(parseCommandLine(["--config=/kp.yaml"]), () => text);
  const cases: [string, RegExp][] = [
    [
      KUBEADM.replace(
        "  minSyncPeriod: 0s\n  syncPeriod: 0s\nipvs",
        "  minSyncPeriod: soon\n  syncPeriod: 0s\nipvs",
      ),
      /field "iptables.minSyncPeriod"/,
    ],
    [
      KUBEADM.replace('mode: ""', "mode: userspace"),
      /^KubeProxyConfiguration\.Mode\.ProxyMode: Invalid value: "userspace": must be ebpf, iptables, ipvs, nftables or blank/,
    ],
    [KUBEADM.replace("kind: KubeProxyConfiguration", "kind: KubeletConfiguration"), /field "kind"/],
    ["{", /cannot parse config file/],
  ];
  for (const [text, message] of cases)
    assert.throws(
      () => load(text),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );
});

test("without --config the flags configure; with it only --hostname-override and --v apply", () => {
  const argv = ["--proxy-mode=nftables", "--nftables-sync-period=5s", "--hostname-override=Node-A ", "-v=3"];
  const flagsOnly = resolve(loadConfiguration(parseCommandLine(argv), () => ""));
  assert.deepEqual(
    [flagsOnly.mode, flagsOnly.syncPeriodMs, flagsOnly.hostnameOverride, flagsOnly.verbosity],
    ["nftables", 5000, "node-a", 3],
  );
  const cl = parseCommandLine([...argv, "--config=/etc/kp.yaml"]);
  const withFile = resolve(loadConfiguration(cl, () => KUBEADM));
  assert.deepEqual(
    [withFile.mode, withFile.syncPeriodMs, withFile.hostnameOverride, withFile.verbosity],
    ["iptables", 30_000, "node-a", 3],
  );
  assert.deepEqual(ignoredWithConfig(cl), ["proxy-mode", "nftables-sync-period"]);
});

test("bad flags fail with one line naming the flag, exit 2", async () => {
  for (const [argv, message] of [
    [["--proxy-mode=userspace"], /--proxy-mode/],
    [["--iptables-sync-period=often"], /--iptables-sync-period/],
    [["--metrics-bind-address=nowhere"], /--metrics-bind-address/],
    [["--hostname-override=  "], /--hostname-override/],
    [["--no-such-flag"], /--no-such-flag/],
  ] as const) {
    assert.throws(
      () => parseCommandLine(argv),
      (e: unknown) => e instanceof FlagError && message.test(e.message),
    );
    let err = "";
    const code = await main({
      argv,
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      stopSignal: new Promise(() => {}),
    });
    assert.equal(code, 2);
    assert.equal(err.trim().split("\n").length, 1, err);
  }
});

test("conntrack: null takes the default, an explicit 0 leaves the kernel's value; flags set it too", () => {
  const header = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
  assert.deepEqual(resolve(parseConfigFile(`${header}conntrack: {maxPerCore: null}`)).conntrack, {
    maxPerCore: 32768,
    min: 131072,
    tcpEstablishedTimeoutMs: 86_400_000,
    tcpCloseWaitTimeoutMs: 3_600_000,
    tcpBeLiberal: false,
    udpTimeoutMs: 0,
    udpStreamTimeoutMs: 0,
  });
  // kind's nodes cannot write nf_conntrack_max, so kind's file says maxPerCore: 0.
  const kind = resolve(
    parseConfigFile(
      `${header}conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, udpTimeout: 45s, tcpBeLiberal: true}`,
    ),
  ).conntrack;
  assert.equal(kind.maxPerCore, 0);
  assert.equal(kind.tcpEstablishedTimeoutMs, 0);
  assert.equal(kind.tcpCloseWaitTimeoutMs, 3_600_000);
  assert.equal(kind.udpTimeoutMs, 45_000);
  assert.equal(kind.tcpBeLiberal, true);
  const flags = loadConfiguration(
    parseCommandLine([
      "--conntrack-max-per-core=0",
      "--conntrack-min=1000",
      "--conntrack-tcp-timeout-established=2h",
      "--conntrack-udp-timeout-stream=3m",
      "--conntrack-tcp-be-liberal",
    ]),
    () => "",
  ).conntrack;
  assert.deepEqual(
    [
      flags.maxPerCore,
      flags.min,
      flags.tcpEstablishedTimeoutMs,
      flags.udpStreamTimeoutMs,
      flags.tcpBeLiberal,
    ],
    [0, 1000, 7_200_000, 180_000, true],
  );
  assert.throws(
    () => loadConfiguration(parseCommandLine(["--conntrack-min=-1"]), () => ""),
    /Conntrack.*Min: Invalid value: -1: must be greater than or equal to 0/,
  );
});

test("upstream's other flags: applied where they mean something, else accepted, checked and named once", () => {
  // From cmd/kube-proxy/app/options.go AddFlags (v1.37.2): what upstream's flag set would do with each.
  const cfg = (...argv: string[]) => loadConfiguration(parseCommandLine(argv), () => "");
  const c = cfg(
    "--detect-local-mode=InterfaceNamePrefix",
    "--pod-interface-name-prefix=veth",
    "--pod_bridge_interface=cbr0",
    "--oom-score-adj=-500",
    "--healthz-port=0",
  );
  const bare = cfg("--healthz-bind-address=0.0.0.0", "--healthz-port=10266");
  assert.equal(c.detectLocalMode, "InterfaceNamePrefix");
  assert.deepEqual(c.detectLocal, { bridgeInterface: "cbr0", interfaceNamePrefix: "veth" }, "_ reads as -");
  assert.equal(c.oomScoreAdj, -500);
  // Upstream's Complete(): the port flags only fill in an address given without a port; 0 empties the address,
  // which disables healthz, while validation refuses an empty metrics address.
  assert.equal(c.healthzBindAddress, "", "port 0 disables healthz");
  assert.equal(bare.healthzBindAddress, "0.0.0.0:10266");
  assert.equal(
    cfg("--healthz-port=10266").healthzBindAddress,
    "0.0.0.0:10256",
    "an address with a port keeps it",
  );
  assert.throws(
    () => cfg("--metrics-port=0"),
    /^FlagError: KubeProxyConfiguration\.MetricsBindAddress: Invalid value: "": must be IP:port$/,
  );
  assert.equal(cfg().oomScoreAdj, -999, "upstream's default");
  // Without a config file, --iptables-*sync-period is the generic period: nftables mode takes it too.
  const nft = resolve(
    cfg("--proxy-mode=nftables", "--iptables-sync-period=7s", "--iptables-min-sync-period=2s"),
  );
  assert.deepEqual([nft.syncPeriodMs, nft.minSyncPeriodMs], [7000, 2000]);

  const cl = parseCommandLine([
    "--feature-gates=AllAlpha=false,ServiceTrafficDistribution=true",
    "--kube-api-qps=20",
    "--profiling",
    "--logging-format=json",
    "--config-sync-period=15m",
    "--v=2",
  ]);
  assert.deepEqual(notActedOn(cl), [
    "--feature-gates (of the feature gates only KubeProxyIPVS and LoggingAlphaOptions change what is accepted)",
    "--kube-api-qps (requests are not rate-limited)",
    "--profiling (there is no pprof handler)",
    "--logging-format (logs are always JSON lines)",
    "--config-sync-period (watches are not resynced on a timer)",
  ]);
  // A value its type cannot read fails as the flag is parsed (pflag's Set); a value upstream's validation
  // refuses fails once the configuration is complete, in validation's words. upstream-decisions.test.ts has the rest.
  for (const [argv, message] of [
    [["--feature-gates=Foo"], /--feature-gates: missing "=" in "Foo"/],
    [["--config-sync-period=soon"], /--config-sync-period/],
    [["--kube-api-burst=1.5"], /--kube-api-burst/],
    [["--version=maybe"], /--version/],
  ] as const)
    assert.throws(
      () => parseCommandLine(argv),
      (e: unknown) => e instanceof FlagError && message.test(e.message),
    );
  for (const [argv, message] of [
    [
      ["--oom-score-adj=-1001"],
      /OOMScoreAdj: Invalid value: -1001: must be within the range \[-1000, 1000\]/,
    ],
    [["--detect-local-mode=Magic"], /DetectLocalMode: Unsupported value: "Magic"/],
    [["--kube-api-burst=-1"], /ClientConnection\.Burst: Invalid value: -1/],
  ] as const)
    assert.throws(
      () => cfg(...argv),
      (e: unknown) => e instanceof FlagError && message.test(e.message),
    );
  assert.throws(
    () =>
      loadConfiguration(
        parseCommandLine(["--config=/kp.yaml"]),
        () =>
          "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\noomScoreAdj: 2000\n",
      ),
    /OOMScoreAdj: Invalid value: 2000: must be within the range \[-1000, 1000\]/,
  );
  assert.equal(
    parseConfigFile(
      "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\noomScoreAdj: 0\n",
    ).oomScoreAdj,
    0,
    "an explicit 0 is 0 (a pointer upstream)",
  );
});

test("-h is --help, as cobra's shorthand; an unknown flag names the close ones", async () => {
  const run = (...argv: string[]) => runMain(main, ...argv);
  const short = await run("-h");
  assert.deepEqual([short.code, short.err], [0, ""]);
  assert.equal(short.out, (await run("--help")).out);
  assert.match(short.out, /^Usage: switchyard-proxy \[flags\]\n[\s\S]*\n {2}-h, --help\n/);
  assert.deepEqual(await run("--proxy-mod", "x"), {
    code: 2,
    out: "",
    err: "switchyard-proxy: unknown flag: --proxy-mod; did you mean --proxy-mode?\n",
  });
  assert.equal((await run("--h")).err, "switchyard-proxy: unknown flag: --h; did you mean --help?\n");
});

test("--version prints what this is and exits 0; the OOM score is written, a refusal only logged", async () => {
  for (const [flag, check] of [
    [
      "--version",
      (out: string) => /^Switchyard-Proxy v\d+\.\d+\.\d+ \(kube-proxy v1\.37\.2 compatible\)\n$/.test(out),
    ],
    ["--version=raw", (out: string) => JSON.parse(out).compatibleWith === "kube-proxy v1.37.2"],
  ] as const) {
    let out = "";
    const code = await main({
      argv: [flag],
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      stopSignal: new Promise(() => {}),
    });
    assert.equal(code, 0);
    assert.ok(check(out), out);
  }
  const writes: string[] = [];
  let logged = "";
  const logger = new Logger({ level: "debug", out: { write: (s: string) => (logged += s) } });
  applyOomScoreAdj(-999, logger, (path, text) => writes.push(`${path}=${text}`));
  assert.deepEqual(writes, ["/proc/self/oom_score_adj=-999"]);
  applyOomScoreAdj(-999, logger, () => {
    throw new Error("EACCES: permission denied");
  });
  assert.match(logged, /Failed to apply OOMScore/);
  assert.match(logged, /EACCES/);
});

test("server addresses as upstream defaults them: a bare IP gets the port, an IPv6 bindAddress IPv6 defaults", () => {
  const header = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
  const file = (body: string) => parseConfigFile(`${header}${body}`);
  const v4 = file("bindAddress: 10.0.0.5\n");
  assert.deepEqual([v4.healthzBindAddress, v4.metricsBindAddress], ["0.0.0.0:10256", "127.0.0.1:10249"]);
  const v6 = file('bindAddress: "::"\n');
  assert.deepEqual([v6.healthzBindAddress, v6.metricsBindAddress], ["[::]:10256", "[::1]:10249"]);
  const bare = file("metricsBindAddress: 0.0.0.0\nhealthzBindAddress: fd00::1\nbindAddressHardFail: true\n");
  assert.deepEqual(
    [bare.metricsBindAddress, bare.healthzBindAddress, bare.bindAddressHardFail],
    ["0.0.0.0:10249", "[fd00::1]:10256", true],
  );
  // Flags: a bare IP gets the port of --metrics-port (its default) when the proxy runs (upstream's Complete());
  // --write-config-to skips that, and upstream's validation then refuses it.
  const run = (...argv: string[]) => loadConfiguration(parseCommandLine(argv), () => "");
  const flags = run(
    "--metrics-bind-address=10.1.2.3",
    "--healthz-bind-address=[::]:10256",
    "--bind-address-hard-fail",
  );
  assert.deepEqual(
    [flags.metricsBindAddress, flags.healthzBindAddress, flags.bindAddressHardFail],
    ["10.1.2.3:10249", "[::]:10256", true],
  );
  assert.throws(
    () => run("--metrics-bind-address=10.1.2.3", "--write-config-to=/dev/null"),
    /^FlagError: KubeProxyConfiguration.MetricsBindAddress: Invalid value: "10.1.2.3": must be IP:port$/,
  );
  assert.throws(() => parseCommandLine(["--metrics-bind-address=localhost:10249"]), /want IP or IP:port/);
});

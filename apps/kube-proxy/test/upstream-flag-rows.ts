// kube-proxy v1.37.2's decision for each flag, value by value, as upstream-decisions.test.ts reads them: the value
// --write-config-to writes at `path`, or "reject". Written from upstream's code (the sources are listed in
// upstream-decisions.test.ts); "undefined" is a field the written file leaves out (omitempty).
import type { Table } from "./upstream-decisions.js";

const R = "reject";
const nft = ["--proxy-mode=nftables"];
const ipvs = ["--proxy-mode=ipvs"];

/**
 * kube-proxy's flags that are not configuration fields, so have no row here; each is tested where named:
 * --config (config.test.ts, the field rows), --write-config-to (write-config.test.ts, and every row), --cleanup
 * (traffic.test.ts), --init-only and --master (init-only.test.ts, master-init-only.test.ts, client-config.test.ts),
 * --version (config.test.ts), --help.
 */
export const COMMAND_FLAGS = [
  "config",
  "write-config-to",
  "cleanup",
  "init-only",
  "master",
  "version",
  "help",
];

export const FLAG_ROWS: readonly Table[] = [
  {
    input: { flag: "proxy-mode" },
    path: "mode",
    rows: [
      ["iptables", "iptables"],
      ["nftables", "nftables"],
      ["ipvs", "ipvs"],
      // Blank is the platform default (platformApplyDefaults).
      ["", "iptables"],
      ["userspace", R],
      ["IPTables", R],
    ],
  },
  {
    // The KubeProxyIPVS gate (deprecated, on by default) decides whether ipvs is a valid mode at all.
    input: { flag: "proxy-mode" },
    path: "mode",
    extra: ["--feature-gates=KubeProxyIPVS=false"],
    rows: [
      ["ipvs", R],
      ["nftables", "nftables"],
    ],
  },
  {
    input: { flag: "hostname-override" },
    path: "hostnameOverride",
    rows: [
      ["Node-A ", "node-a"],
      ["  ", R],
      ["", ""],
    ],
  },
  {
    input: { flag: "cluster-cidr" },
    path: "clusterCIDR",
    rows: [
      ["10.244.0.0/16", "10.244.0.0/16"],
      ["10.244.0.0/16,fd00:10::/64", "10.244.0.0/16,fd00:10::/64"],
      ["10.244.0.0/16,10.245.0.0/16", R],
      ["10.244.0.0/16,fd00:10::/64,10.245.0.0/16", R],
      ["bogus", R],
      // Given empty, it is one empty CIDR (strings.Split), which ClusterCIDR mode refuses.
      [
        "",
        R,
        { ours: "", deviation: "an empty --cluster-cidr reads as no CIDR given (local traffic undetected)" },
      ],
    ],
  },
  {
    // Only ClusterCIDR mode checks the CIDRs.
    input: { flag: "cluster-cidr" },
    path: "clusterCIDR",
    extra: ["--detect-local-mode=NodeCIDR"],
    rows: [["bogus", "bogus"]],
  },
  {
    input: { flag: "kubeconfig" },
    path: "clientConnection.kubeconfig",
    rows: [["/var/lib/kube-proxy/kubeconfig.conf", "/var/lib/kube-proxy/kubeconfig.conf"]],
  },
  {
    input: { flag: "kube-api-content-type" },
    path: "clientConnection.contentType",
    rows: [["application/json", "application/json"]],
  },
  {
    input: { flag: "kube-api-burst" },
    path: "clientConnection.burst",
    rows: [
      ["20", 20],
      ["0x10", 16],
      ["0", 0],
      ["-1", R],
      ["1.5", R],
    ],
  },
  {
    input: { flag: "kube-api-qps" },
    path: "clientConnection.qps",
    rows: [
      ["50", 50],
      ["0.5", 0.5],
      ["-1", -1],
      ["fast", R],
    ],
  },
  {
    input: { flag: "bind-address" },
    path: "bindAddress",
    rows: [
      ["10.0.0.5", "10.0.0.5"],
      ["::", "::"],
      ["localhost", R],
      // IPVar takes an empty value as "not given".
      ["", "0.0.0.0"],
    ],
  },
  {
    input: { flag: "healthz-bind-address" },
    path: "healthzBindAddress",
    rows: [
      ["0.0.0.0:10266", "0.0.0.0:10266"],
      ["[::]:10256", "[::]:10256"],
      // Complete() adds --healthz-port only when not writing the configuration; validation then wants IP:port.
      ["10.0.0.5", R],
      ["localhost:10256", R],
      ["0.0.0.0:0", R],
      ["0.0.0.0:70000", R],
      // IPPortVar takes an empty value as "not given": the default stays.
      ["", "0.0.0.0:10256"],
    ],
  },
  {
    input: { flag: "metrics-bind-address" },
    path: "metricsBindAddress",
    rows: [
      ["0.0.0.0:10249", "0.0.0.0:10249"],
      ["", "127.0.0.1:10249"],
      ["127.0.0.1:x", R],
    ],
  },
  {
    // Deprecated; applied in Complete() only when the configuration is not being written.
    input: { flag: "healthz-port" },
    path: "healthzBindAddress",
    rows: [
      ["10266", "0.0.0.0:10256"],
      ["0", "0.0.0.0:10256"],
      ["port", R],
    ],
  },
  {
    input: { flag: "metrics-port" },
    path: "metricsBindAddress",
    rows: [
      ["10250", "127.0.0.1:10249"],
      ["0", "127.0.0.1:10249"],
      ["0x10", "127.0.0.1:10249"],
      ["port", R],
    ],
  },
  {
    input: { flag: "bind-address-hard-fail" },
    path: "bindAddressHardFail",
    rows: [
      ["true", true],
      ["T", true],
      ["0", false],
      ["yes", R],
    ],
  },
  {
    input: { flag: "profiling" },
    path: "enableProfiling",
    rows: [
      ["true", true],
      ["t", true],
      ["maybe", R],
    ],
  },
  {
    input: { flag: "show-hidden-metrics-for-version" },
    path: "showHiddenMetricsForVersion",
    rows: [
      ["1.36", "1.36"],
      ["", ""],
      ["1.35", R],
      ["1.37", R],
      ["x", R],
    ],
  },
  {
    input: { flag: "iptables-masquerade-bit" },
    path: "iptables.masqueradeBit",
    rows: [
      ["5", 5],
      ["0", 0],
      ["31", 31],
      ["0x1f", 31],
      ["010", 8],
      ["32", R],
      ["-1", R],
    ],
  },
  {
    // The flag sets the iptables section's bit only; nftables mode reads its own section's.
    input: { flag: "iptables-masquerade-bit" },
    path: "nftables.masqueradeBit",
    extra: nft,
    rows: [["5", 14]],
  },
  {
    input: { flag: "masquerade-all" },
    path: "iptables.masqueradeAll",
    rows: [
      ["true", true],
      ["false", false],
    ],
  },
  {
    // One internal field, written to the mode's section (conversion.go).
    input: { flag: "masquerade-all" },
    path: "nftables.masqueradeAll",
    extra: nft,
    rows: [["true", true]],
  },
  {
    input: { flag: "iptables-localhost-nodeports" },
    path: "iptables.localhostNodePorts",
    rows: [
      ["false", false],
      ["F", false],
    ],
  },
  {
    input: { flag: "iptables-sync-period" },
    path: "iptables.syncPeriod",
    rows: [
      ["7s", "7s"],
      ["90s", "1m30s"],
      ["0s", R],
      ["-1s", R],
      // Below the 1 s minimum sync period.
      ["500ms", R],
      ["7", R],
    ],
  },
  {
    // Without a config file it is the generic period: nftables mode's too.
    input: { flag: "iptables-sync-period" },
    path: "nftables.syncPeriod",
    extra: nft,
    rows: [["7s", "7s"]],
  },
  {
    // ...but not IPVS mode's, which has its own flag.
    input: { flag: "iptables-sync-period" },
    path: "ipvs.syncPeriod",
    extra: ipvs,
    rows: [["7s", "30s"]],
  },
  {
    input: { flag: "iptables-min-sync-period" },
    path: "iptables.minSyncPeriod",
    rows: [
      ["2s", "2s"],
      ["0s", "0s"],
      ["-1s", R],
      ["31s", R],
    ],
  },
  {
    input: { flag: "ipvs-sync-period" },
    path: "ipvs.syncPeriod",
    extra: ipvs,
    rows: [
      ["7s", "7s"],
      ["0s", R],
    ],
  },
  {
    input: { flag: "ipvs-sync-period" },
    path: "iptables.syncPeriod",
    rows: [["7s", "30s"]],
  },
  {
    input: { flag: "ipvs-min-sync-period" },
    path: "ipvs.minSyncPeriod",
    extra: ipvs,
    rows: [
      ["1s", "1s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "ipvs-scheduler" },
    path: "ipvs.scheduler",
    rows: [
      ["wrr", "wrr"],
      ["bogus", "bogus"],
    ],
  },
  {
    input: { flag: "ipvs-exclude-cidrs" },
    path: "ipvs.excludeCIDRs",
    extra: ipvs,
    rows: [
      ["10.0.0.0/8,fd00::/8", ["10.0.0.0/8", "fd00::/8"]],
      ["bogus", R],
    ],
  },
  {
    // Checked only in IPVS mode.
    input: { flag: "ipvs-exclude-cidrs" },
    path: "ipvs.excludeCIDRs",
    rows: [["bogus", ["bogus"]]],
  },
  {
    input: { flag: "ipvs-strict-arp" },
    path: "ipvs.strictARP",
    rows: [["true", true]],
  },
  {
    input: { flag: "ipvs-tcp-timeout" },
    path: "ipvs.tcpTimeout",
    extra: ipvs,
    rows: [
      ["10s", "10s"],
      ["-1s", R],
    ],
  },
  {
    // Checked only in IPVS mode.
    input: { flag: "ipvs-tcp-timeout" },
    path: "ipvs.tcpTimeout",
    rows: [["-1s", "-1s"]],
  },
  {
    input: { flag: "ipvs-tcpfin-timeout" },
    path: "ipvs.tcpFinTimeout",
    extra: ipvs,
    rows: [
      ["5s", "5s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "ipvs-udp-timeout" },
    path: "ipvs.udpTimeout",
    extra: ipvs,
    rows: [
      ["30s", "30s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "detect-local-mode" },
    path: "detectLocalMode",
    rows: [
      ["NodeCIDR", "NodeCIDR"],
      ["ClusterCIDR", "ClusterCIDR"],
      ["", "ClusterCIDR"],
      // Without --pod-bridge-interface / --pod-interface-name-prefix.
      ["BridgeInterface", R],
      ["InterfaceNamePrefix", R],
      ["Magic", R],
    ],
  },
  {
    input: { flag: "pod-bridge-interface" },
    path: "detectLocal.bridgeInterface",
    extra: ["--detect-local-mode=BridgeInterface"],
    rows: [
      ["cbr0", "cbr0"],
      ["", R],
    ],
  },
  {
    input: { flag: "pod-interface-name-prefix" },
    path: "detectLocal.interfaceNamePrefix",
    extra: ["--detect-local-mode=InterfaceNamePrefix"],
    rows: [
      ["veth", "veth"],
      ["", R],
    ],
  },
  {
    input: { flag: "nodeport-addresses" },
    path: "nodePortAddresses",
    rows: [
      ["10.0.0.0/8", ["10.0.0.0/8"]],
      ["primary,localhost", ["primary", "localhost"]],
      ["10.0.0.0/8,fd00::/64,all", ["10.0.0.0/8", "fd00::/64", "all"]],
      ["primary,primary", R],
      ["bogus", R],
      ["10.0.0.1", R],
    ],
  },
  {
    input: { flag: "oom-score-adj" },
    path: "oomScoreAdj",
    rows: [
      ["-500", -500],
      ["1000", 1000],
      ["-0x10", -16],
      ["1001", R],
      ["-1001", R],
    ],
  },
  {
    input: { flag: "conntrack-max-per-core" },
    path: "conntrack.maxPerCore",
    rows: [
      ["0", 0],
      ["65536", 65536],
      ["0x100", 256],
      ["-1", R],
    ],
  },
  {
    input: { flag: "conntrack-min" },
    path: "conntrack.min",
    rows: [
      ["0", 0],
      ["262144", 262144],
      ["-5", R],
    ],
  },
  {
    input: { flag: "conntrack-tcp-timeout-established" },
    path: "conntrack.tcpEstablishedTimeout",
    rows: [
      ["2h", "2h0m0s"],
      ["0", "0s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "conntrack-tcp-timeout-close-wait" },
    path: "conntrack.tcpCloseWaitTimeout",
    rows: [
      ["30m", "30m0s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "conntrack-tcp-be-liberal" },
    path: "conntrack.tcpBeLiberal",
    rows: [
      ["true", true],
      ["1", true],
    ],
  },
  {
    input: { flag: "conntrack-udp-timeout" },
    path: "conntrack.udpTimeout",
    rows: [
      ["45s", "45s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "conntrack-udp-timeout-stream" },
    path: "conntrack.udpStreamTimeout",
    rows: [
      ["2m", "2m0s"],
      ["-1s", R],
    ],
  },
  {
    input: { flag: "config-sync-period" },
    path: "configSyncPeriod",
    rows: [
      ["5m", "5m0s"],
      ["0s", R],
      ["-1m", R],
    ],
  },
  {
    input: { flag: "feature-gates" },
    path: "featureGates",
    rows: [
      ["KubeProxyIPVS=false", { KubeProxyIPVS: false }],
      [" KubeProxyIPVS = T ", { KubeProxyIPVS: true }],
      ["", undefined],
      ["KubeProxyIPVS", R],
      ["KubeProxyIPVS=maybe", R],
      [
        "NoSuchGate=true",
        R,
        {
          ours: { NoSuchGate: true },
          deviation: "upstream refuses gates it does not know; we do not carry its list of gates",
        },
      ],
    ],
  },
  {
    input: { flag: "v" },
    path: "logging.verbosity",
    rows: [
      ["3", 3],
      ["20", 20],
      ["2147483647", 2147483647],
      ["2147483648", R],
      ["-1", R],
      ["+1", R],
      ["0x2", R],
    ],
  },
  {
    input: { flag: "logging-format" },
    path: "logging.format",
    rows: [
      ["json", "json"],
      ["text", "text"],
      ["yaml", R],
    ],
  },
  {
    input: { flag: "vmodule" },
    path: "logging.vmodule",
    rows: [
      ["proxier*=4", [{ filePattern: "proxier*", verbosity: 4 }]],
      [
        "a=1,b=2",
        [
          { filePattern: "a", verbosity: 1 },
          { filePattern: "b", verbosity: 2 },
        ],
      ],
      ["x", R],
      ["x=y", R],
    ],
  },
  {
    // vmodule is a text-format option.
    input: { flag: "vmodule" },
    path: "logging.vmodule",
    extra: ["--logging-format=json"],
    rows: [["proxier*=4", R]],
  },
  {
    input: { flag: "log-flush-frequency" },
    path: "logging.flushFrequency",
    rows: [
      ["10s", "10s"],
      ["0s", R],
      ["often", R],
    ],
  },
  {
    // The split-stream and buffer options are behind the LoggingAlphaOptions gate (alpha, off by default).
    input: { flag: "log-text-split-stream" },
    path: "logging.options.text.splitStream",
    rows: [
      ["false", undefined],
      ["true", R],
    ],
  },
  {
    input: { flag: "log-text-split-stream" },
    path: "logging.options.text.splitStream",
    extra: ["--feature-gates=LoggingAlphaOptions=true"],
    rows: [["true", true]],
  },
  {
    input: { flag: "log-text-info-buffer-size" },
    path: "logging.options.text.infoBufferSize",
    rows: [
      ["0", "0"],
      ["1Ki", R],
      ["lots", R],
    ],
  },
  {
    input: { flag: "log-json-split-stream" },
    path: "logging.options.json.splitStream",
    rows: [["true", R]],
  },
  {
    input: { flag: "log-json-info-buffer-size" },
    path: "logging.options.json.infoBufferSize",
    extra: ["--feature-gates=LoggingAlphaOptions=true"],
    rows: [
      ["1Ki", "1Ki"],
      ["2M", "2M"],
    ],
  },
];

// kube-proxy v1.37.2's decision for each KubeProxyConfiguration field of a --config file, value by value (the raw
// YAML after "field: "), as upstream-decisions.test.ts reads them: the value --write-config-to writes at `path`, or
// "reject". Written from upstream's code (the sources are listed in upstream-decisions.test.ts): v1alpha1 defaults.go
// replaces zero values with defaults, validation.go refuses what it refuses, and a value of the wrong type fails
// decoding while an unknown field only fails strict decoding (the lenient decode then runs).
import type { Table } from "./upstream-decisions.js";

const R = "reject";

export const FIELD_ROWS: readonly Table[] = [
  {
    input: { field: "mode" },
    path: "mode",
    rows: [
      ["nftables", "nftables"],
      ['""', "iptables"],
      ["userspace", R],
      ["[iptables]", R],
    ],
  },
  {
    input: { field: "bindAddress" },
    path: "bindAddress",
    rows: [
      ["10.0.0.5", "10.0.0.5"],
      ['"::"', "::"],
      ['""', "0.0.0.0"],
      ["localhost", R],
    ],
  },
  {
    input: { field: "healthzBindAddress" },
    path: "healthzBindAddress",
    rows: [
      ['""', "0.0.0.0:10256"],
      ["10.0.0.5", "10.0.0.5:10256"],
      ["fd00::1", "[fd00::1]:10256"],
      ["10.0.0.5:9999", "10.0.0.5:9999"],
      ["localhost", R],
    ],
  },
  {
    // An IPv6 bindAddress gives the servers IPv6 defaults.
    input: { field: "metricsBindAddress" },
    path: "metricsBindAddress",
    extra: ['bindAddress: "::"'],
    rows: [
      ['""', "[::1]:10249"],
      ["0.0.0.0", "0.0.0.0:10249"],
    ],
  },
  {
    input: { field: "bindAddressHardFail" },
    path: "bindAddressHardFail",
    rows: [
      ["true", true],
      ['"yes"', R],
    ],
  },
  {
    input: { field: "hostnameOverride" },
    path: "hostnameOverride",
    // Only the flag is trimmed and lower-cased.
    rows: [["Node-A", "Node-A"]],
  },
  {
    input: { field: "clusterCIDR" },
    path: "clusterCIDR",
    rows: [
      ["10.244.0.0/16", "10.244.0.0/16"],
      ["10.244.0.0/16,fd00:10::/64", "10.244.0.0/16,fd00:10::/64"],
      ["10.244.0.0/16,10.245.0.0/16", R],
      ["bogus", R],
    ],
  },
  {
    input: { field: "nodePortAddresses" },
    path: "nodePortAddresses",
    rows: [
      ["[primary]", ["primary"]],
      ["[10.0.0.0/8, localhost]", ["10.0.0.0/8", "localhost"]],
      ["null", null],
      ["[bogus]", R],
      ["[all, all]", R],
    ],
  },
  {
    input: { field: "nodePortAddresses" },
    path: "nodePortAddresses",
    extra: ["mode: nftables"],
    rows: [["null", ["primary"]]],
  },
  {
    input: { field: "detectLocalMode" },
    path: "detectLocalMode",
    rows: [
      ["NodeCIDR", "NodeCIDR"],
      ['""', "ClusterCIDR"],
      ["BridgeInterface", R],
      ["Magic", R],
    ],
  },
  {
    input: { field: "detectLocal.interfaceNamePrefix" },
    path: "detectLocal.interfaceNamePrefix",
    extra: ["detectLocalMode: InterfaceNamePrefix"],
    rows: [
      ["veth", "veth"],
      ['""', R],
    ],
  },
  {
    input: { field: "iptables.masqueradeBit" },
    path: "iptables.masqueradeBit",
    rows: [
      ["5", 5],
      ["0", 0],
      ["null", 14],
      ["32", R],
      ['"5"', R],
    ],
  },
  {
    input: { field: "nftables.masqueradeBit" },
    path: "nftables.masqueradeBit",
    extra: ["mode: nftables"],
    rows: [
      ["5", 5],
      ["32", R],
    ],
  },
  {
    // Each section is checked only in its own mode.
    input: { field: "nftables.masqueradeBit" },
    path: "nftables.masqueradeBit",
    rows: [["32", 32]],
  },
  {
    input: { field: "iptables.syncPeriod" },
    path: "iptables.syncPeriod",
    rows: [
      ["7s", "7s"],
      ["0s", "30s"],
      ["-1s", R],
      ['"7"', R],
    ],
  },
  {
    input: { field: "iptables.minSyncPeriod" },
    path: "iptables.minSyncPeriod",
    rows: [
      ["0s", "1s"],
      ["250ms", "250ms"],
      ["31s", R],
    ],
  },
  {
    input: { field: "nftables.syncPeriod" },
    path: "nftables.syncPeriod",
    extra: ["mode: nftables"],
    rows: [["1m", "1m0s"]],
  },
  {
    // Another mode's periods are neither read nor written back.
    input: { field: "nftables.syncPeriod" },
    path: "nftables.syncPeriod",
    rows: [["1m", "0s"]],
  },
  {
    input: { field: "ipvs.scheduler" },
    path: "ipvs.scheduler",
    rows: [
      ["lc", "lc"],
      ["bogus", "bogus"],
    ],
  },
  {
    input: { field: "ipvs.excludeCIDRs" },
    path: "ipvs.excludeCIDRs",
    extra: ["mode: ipvs"],
    rows: [
      ["[10.0.0.0/8]", ["10.0.0.0/8"]],
      ["[bogus]", R],
    ],
  },
  {
    input: { field: "ipvs.tcpTimeout" },
    path: "ipvs.tcpTimeout",
    extra: ["mode: ipvs"],
    rows: [
      ["10s", "10s"],
      ["-1s", R],
    ],
  },
  {
    input: { field: "conntrack.maxPerCore" },
    path: "conntrack.maxPerCore",
    rows: [
      ["null", 32768],
      ["0", 0],
      ["-1", R],
    ],
  },
  {
    input: { field: "conntrack.min" },
    path: "conntrack.min",
    rows: [
      ["null", 131072],
      ["-1", R],
    ],
  },
  {
    input: { field: "conntrack.tcpEstablishedTimeout" },
    path: "conntrack.tcpEstablishedTimeout",
    rows: [
      ["null", "24h0m0s"],
      ["0s", "0s"],
      ["-1s", R],
    ],
  },
  {
    input: { field: "conntrack.udpTimeout" },
    path: "conntrack.udpTimeout",
    rows: [
      ["45s", "45s"],
      ["-1s", R],
    ],
  },
  {
    input: { field: "oomScoreAdj" },
    path: "oomScoreAdj",
    rows: [
      ["null", -999],
      ["0", 0],
      ["2000", R],
    ],
  },
  {
    input: { field: "configSyncPeriod" },
    path: "configSyncPeriod",
    rows: [
      ["0s", "15m0s"],
      ["5m", "5m0s"],
      ["-1s", R],
    ],
  },
  {
    input: { field: "clientConnection.qps" },
    path: "clientConnection.qps",
    rows: [
      ["0", 5],
      ["50", 50],
      ["0.5", 0.5],
      ['"x"', R],
    ],
  },
  {
    input: { field: "clientConnection.burst" },
    path: "clientConnection.burst",
    rows: [
      ["0", 10],
      ["20", 20],
      ["-1", R],
    ],
  },
  {
    input: { field: "clientConnection.contentType" },
    path: "clientConnection.contentType",
    rows: [
      ['""', "application/vnd.kubernetes.protobuf"],
      ["application/json", "application/json"],
    ],
  },
  {
    input: { field: "featureGates" },
    path: "featureGates",
    rows: [
      ["{KubeProxyIPVS: false}", { KubeProxyIPVS: false }],
      ["{KubeProxyIPVS: maybe}", R],
      [
        "{NoSuchGate: true}",
        R,
        {
          ours: { NoSuchGate: true },
          deviation: "upstream refuses gates it does not know; we do not carry its list of gates",
        },
      ],
    ],
  },
  {
    input: { field: "featureGates" },
    path: "mode",
    extra: ["mode: ipvs"],
    rows: [["{KubeProxyIPVS: false}", R]],
  },
  {
    input: { field: "logging.verbosity" },
    path: "logging.verbosity",
    rows: [
      ["4", 4],
      ["-1", R],
    ],
  },
  {
    input: { field: "logging.format" },
    path: "logging.format",
    rows: [
      ["json", "json"],
      ['""', "text"],
      ["yaml", R],
    ],
  },
  {
    input: { field: "logging.flushFrequency" },
    path: "logging.flushFrequency",
    rows: [
      ["0", "5s"],
      ["10s", "10s"],
      ["-1s", R],
    ],
  },
  {
    input: { field: "showHiddenMetricsForVersion" },
    path: "showHiddenMetricsForVersion",
    rows: [
      ['"1.36"', "1.36"],
      ['"1.35"', R],
    ],
  },
  {
    input: { field: "enableProfiling" },
    path: "enableProfiling",
    rows: [["true", true]],
  },
  {
    // Decoded, then dropped: the internal configuration has no port range.
    input: { field: "portRange" },
    path: "portRange",
    rows: [['"30000-32767"', ""]],
  },
  {
    input: { field: "winkernel.networkName" },
    path: "winkernel.networkName",
    rows: [["l2bridge", "l2bridge"]],
  },
  {
    // Gone from v1alpha1: unknown, so only strict decoding fails and the proxy runs without it.
    input: { field: "iptables.snatNodeInternalIP" },
    path: "iptables.snatNodeInternalIP",
    rows: [["true", undefined]],
  },
  {
    input: { field: "bindAdress" },
    path: "bindAddress",
    rows: [["10.0.0.5", "0.0.0.0"]],
  },
];

// --detect-local-mode in the app: which detector each mode and its flag give, upstream's
// validation error when the interface is missing, and the detector reaching the nftables
// rules (once only ClusterCIDR/NodeCIDR did).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ExecOptions, type ProxyMetrics, silentLogger } from "@switchyard/proxier";
import { parseCommandLine } from "../src/cli/flags.js";
import { defaultConfig, resolve } from "../src/config/config.js";
import { createBackend } from "../src/dataplane.js";
import { localDetector, NetworkConfigError } from "../src/network.js";

const options = (...flags: string[]) => resolve(parseCommandLine(flags).apply(defaultConfig(), false));

describe("detect-local flags", () => {
  test("each mode gives its detector, the same for both families when interface-based", () => {
    const cases = [
      [["--cluster-cidr=10.0.0.0/8,fd00::/48"], { mode: "ClusterCIDR", cidr: "10.0.0.0/8" }, "fd00::/48"],
      [
        ["--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0"],
        { mode: "BridgeInterface", interfaceName: "cbr0" },
      ],
      [
        ["--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix=veth"],
        { mode: "InterfaceNamePrefix", prefix: "veth" },
      ],
    ] as const;
    for (const [flags, v4, v6] of cases) {
      const o = options(...flags);
      assert.deepEqual(localDetector(o, "IPv4", undefined), v4);
      assert.deepEqual(localDetector(o, "IPv6", undefined), v6 ? { mode: "ClusterCIDR", cidr: v6 } : v4);
    }
  });

  test("an interface mode without its interface fails as upstream's validation does", () => {
    for (const [mode, field] of [
      ["BridgeInterface", "InterfaceName"],
      ["InterfaceNamePrefix", "InterfacePrefix"],
    ]) {
      assert.throws(
        () => localDetector(options(`--detect-local-mode=${mode}`), "IPv4", undefined),
        (e: unknown) =>
          e instanceof NetworkConfigError &&
          e.message ===
            `KubeProxyConfiguration.DetectLocalConfiguration.${field}: Invalid value: "": must not be empty`,
      );
    }
  });
});

describe("detect-local in nftables mode", () => {
  for (const [flags, match] of [
    [["--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0"], "iifname != cbr0"],
    [["--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix=veth"], "iifname != veth*"],
  ] as const) {
    test(`${flags[0]}: the clusterIP masquerade rule matches on ${match}`, async () => {
      const scripts: string[] = [];
      const exec = async (_cmd: string, _args: readonly string[], o?: ExecOptions) => {
        if (typeof o?.stdin === "string") scripts.push(o.stdin);
        // "nft -j list": no table yet
        return { code: 0, stdout: '{"nftables": []}', stderr: "" };
      };
      const backend = await createBackend(
        {
          options: options("--proxy-mode=nftables", ...flags),
          nodeName: "node1",
          node: undefined,
          nodeIPs: { IPv4: "192.168.0.2", IPv6: "" },
          exec,
          metrics: {} as ProxyMetrics,
          logger: silentLogger,
          tcpBeLiberal: false,
        },
        "IPv4",
      );
      await backend.sync({ services: new Map(), endpoints: new Map(), now: 0 });
      const rule = `add rule ip kube-proxy services ip daddr @cluster-ips ${match} mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"`;
      assert.ok(
        scripts.some((s) => s.split("\n").includes(rule)),
        `no "${rule}" in:\n${scripts.join("\n")}`,
      );
    });
  }
});

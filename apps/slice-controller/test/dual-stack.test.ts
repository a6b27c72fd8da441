// Dual-stack needs a control plane whose service CIDR has both families: the lab's default is IPv4
// only, and then the apiserver refuses any Service asking for IPv6.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { discardLogger } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { freeControlPlanePorts, missingControlPlane } from "@switchyard/testbed";
import { down, up } from "@switchyard/testbed/controlplane";
import { type App, DEFAULT_FLAGS, startApp } from "../src/index.js";
import { Api, createNamespace, createNode, createPods, createService, slicesOf, summary } from "./helpers.js";

describe("dual-stack Services", { skip: missingControlPlane() }, () => {
  let stateDir: string;
  let api: Api;
  let app: App;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "switchyard-slice-app-ds-"));
    const state = await up({
      stateDir,
      detached: false,
      controllerManager: false,
      scheduler: false,
      serviceCidr: "10.96.0.0/16,fd00:10:96::/112",
      ports: await freeControlPlanePorts(),
      out: { write: () => {} },
    });
    api = new Api(state.server, stateDir);
    await createNode(api, "node-a", "zone-a", "4");
    app = await startApp(
      { ...DEFAULT_FLAGS, kubeconfig: state.kubeconfig, leaderElect: false, metricsBindAddress: undefined },
      { logger: discardLogger },
    );
  });

  after(async () => {
    await app?.stop();
    api?.close();
    if (stateDir) await down(stateDir);
  });

  test("a RequireDualStack Service gets one slice per family, each with its Pods' addresses", async () => {
    await createNamespace(api, "ds");
    await createService(api, "ds", "web", {
      ipFamilyPolicy: "RequireDualStack",
      ipFamilies: ["IPv4", "IPv6"],
      selector: { app: "web" },
      ports: [{ port: 80, targetPort: 8080 }],
    });
    await createPods(
      api,
      "ds",
      [1, 2, 3].map((i) => ({ name: `web-${i}`, node: "node-a", ips: [`10.8.0.${i}`, `fd00:10:244::${i}`] })),
    );
    const slices = await eventually(
      "two families of three",
      async () => {
        const s = await slicesOf(api, "ds", "web");
        const ok = s.length === 2 && s.every((x) => (x.endpoints ?? []).length === 3);
        return ok ? s : undefined;
      },
      { describe: async () => summary(await slicesOf(api, "ds", "web")) },
    );
    const byFamily = Object.fromEntries(
      slices.map((s) => [s.addressType, (s.endpoints ?? []).map((e) => e.addresses[0]).sort()]),
    );
    assert.deepEqual(byFamily, {
      IPv4: ["10.8.0.1", "10.8.0.2", "10.8.0.3"],
      IPv6: ["fd00:10:244::1", "fd00:10:244::2", "fd00:10:244::3"],
    });
  });

  test("turning a dual-stack Service single-stack deletes the other family's slice", async () => {
    await api.mergePatch("/api/v1/namespaces/ds/services/web", {
      spec: { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"] },
    });
    const slices = await eventually("IPv4 only", async () => {
      const s = await slicesOf(api, "ds", "web");
      return s.length === 1 && s[0]?.addressType === "IPv4" ? s : undefined;
    });
    assert.equal(slices[0]?.endpoints?.length, 3);
  });
});

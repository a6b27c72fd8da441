import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EndpointInfo } from "../../src/model/endpoint.js";
import type { ServicePortInfo } from "../../src/model/service-port.js";
import { policyChain, trafficPolicyPlan } from "../../src/model/traffic-policy.js";
import { svc } from "../../src/testing/fixtures.js";

// Only the list lengths matter to the plan.
const one = [{ ip: "10.180.0.1" } as EndpointInfo];
const none: EndpointInfo[] = [];
const lb = {
  nodePort: 3001,
  loadBalancerVIPs: ["203.0.113.1"],
  loadBalancerSourceRanges: ["203.0.113.0/25"],
};

describe("trafficPolicyPlan", () => {
  const cases: {
    name: string;
    svc: ServicePortInfo;
    cluster: EndpointInfo[] | undefined;
    local: EndpointInfo[] | undefined;
    any: boolean;
    internal: [policy: string, hasEndpoints: boolean, verdict: string];
    external: [policy: string, hasEndpoints: boolean, verdict: string];
    chains: { cluster: boolean; local: boolean; external: boolean };
  }[] = [
    {
      name: "Cluster policies with endpoints",
      svc: svc({ nodePort: 3001 }),
      cluster: one,
      local: undefined,
      any: true,
      internal: ["cluster", true, "drop"],
      external: ["cluster", true, "drop"],
      chains: { cluster: true, local: false, external: true },
    },
    {
      name: "no endpoints anywhere: rejected, no chains",
      svc: svc({ nodePort: 3001 }),
      cluster: none,
      local: undefined,
      any: false,
      internal: ["cluster", false, "reject"],
      external: ["cluster", false, "reject"],
      chains: { cluster: false, local: false, external: false },
    },
    {
      name: "ETP=Local without local endpoints keeps the external chain",
      svc: svc({ nodePort: 3001, externalPolicyLocal: true }),
      cluster: one,
      local: undefined,
      any: true,
      internal: ["cluster", true, "drop"],
      external: ["local", false, "drop"],
      chains: { cluster: true, local: false, external: true },
    },
    {
      name: "ETP=Local with a local endpoint",
      svc: svc({ nodePort: 3001, externalPolicyLocal: true }),
      cluster: one,
      local: one,
      any: true,
      internal: ["cluster", true, "drop"],
      external: ["local", true, "drop"],
      chains: { cluster: true, local: true, external: true },
    },
    {
      name: "ITP=Local without local endpoints is dropped",
      svc: svc({ internalPolicyLocal: true }),
      cluster: undefined,
      local: undefined,
      any: true,
      internal: ["local", false, "drop"],
      external: ["cluster", true, "drop"],
      chains: { cluster: false, local: false, external: false },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const plan = trafficPolicyPlan(
        c.svc,
        { clusterEndpoints: c.cluster, localEndpoints: c.local, hasAnyEndpoints: c.any },
        { firewallRequiresEndpoints: true },
      );
      const route = (r: typeof plan.internal) => [r.policy, r.hasEndpoints, r.noEndpointsVerdict];
      assert.deepEqual(route(plan.internal), c.internal);
      assert.deepEqual(route(plan.external), c.external);
      assert.deepEqual(
        {
          cluster: plan.usesClusterPolicyChain,
          local: plan.usesLocalPolicyChain,
          external: plan.usesExternalChain,
        },
        c.chains,
      );
      assert.equal(plan.noLocalInternal, c.any && !c.internal[1]);
      assert.equal(plan.noLocalExternal, c.any && !c.external[1]);
    });
  }

  test("the firewall chain needs endpoints only where the data plane says so", () => {
    const withoutEndpoints = { clusterEndpoints: none, localEndpoints: undefined, hasAnyEndpoints: false };
    const iptables = trafficPolicyPlan(svc(lb), withoutEndpoints, { firewallRequiresEndpoints: true });
    const nftables = trafficPolicyPlan(svc(lb), withoutEndpoints, { firewallRequiresEndpoints: false });
    assert.equal(iptables.usesFirewallChain, false);
    assert.equal(nftables.usesFirewallChain, true);
    const withEndpoints = { clusterEndpoints: one, localEndpoints: undefined, hasAnyEndpoints: true };
    assert.equal(
      trafficPolicyPlan(svc(lb), withEndpoints, { firewallRequiresEndpoints: true }).usesFirewallChain,
      true,
    );
    const noRanges = svc({ ...lb, loadBalancerSourceRanges: [] });
    assert.equal(
      trafficPolicyPlan(noRanges, withEndpoints, { firewallRequiresEndpoints: false }).usesFirewallChain,
      false,
    );
  });

  test("policyChain picks the chain the choice names", () => {
    const chains = { clusterPolicy: "KUBE-SVC-X", localPolicy: "KUBE-SVL-X" };
    assert.equal(policyChain(chains, "cluster"), "KUBE-SVC-X");
    assert.equal(policyChain(chains, "local"), "KUBE-SVL-X");
  });
});

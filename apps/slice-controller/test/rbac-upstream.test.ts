// deploy/rbac.yaml against kube-controller-manager's bootstrap roles at the pinned tag: upstream's golden file
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/controller-roles.yaml) is read from the Go module
// cache, so a release bump that changes either role fails here until our manifests follow.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type KubeObject, readManifests } from "@switchyard/lab/testing";
import { readYamlDocuments } from "@switchyard/testbed";
import { kubernetesSource } from "./upstream-source.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const GOLDEN = "plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/controller-roles.yaml";
const source = kubernetesSource();

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Role {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

/** Our ClusterRole for each upstream bootstrap role. */
const counterparts: Record<string, string> = {
  "system:controller:endpointslice-controller": "switchyard:slice-controller:endpointslice-controller",
  "system:controller:endpointslicemirroring-controller":
    "switchyard:slice-controller:endpointslicemirroring-controller",
};

// A rule as one comparable line; list order inside a rule carries no meaning to the authorizer.
function ruleKey(rule: Rule): string {
  const field = (values: string[] | undefined) => [...(values ?? [])].sort().join(",");
  return [
    `groups=${field(rule.apiGroups)}`,
    `resources=${field(rule.resources)}`,
    `verbs=${field(rule.verbs)}`,
    `names=${field(rule.resourceNames)}`,
    `urls=${field(rule.nonResourceURLs)}`,
  ].join(" ");
}
const ruleSet = (role: Role | undefined) => (role?.rules ?? []).map(ruleKey).sort();

const ours = readManifests(root, ["apps/slice-controller/deploy"]) as unknown as (KubeObject & Role)[];

describe("deploy/rbac.yaml matches upstream's bootstrap controller roles", { skip: source.skip }, () => {
  const upstreamRoles = () => {
    const [list] = readYamlDocuments(join(source.dir ?? "", GOLDEN)) as { items: Role[] }[];
    return list?.items ?? [];
  };

  for (const [upstreamName, ourName] of Object.entries(counterparts)) {
    test(`${ourName} has exactly the rules of ${upstreamName}`, () => {
      const upstream = upstreamRoles().find((r) => r.metadata.name === upstreamName);
      assert.ok(upstream, `${upstreamName} not in ${GOLDEN}`);
      const ourRole = ours.find((o) => o.kind === "ClusterRole" && o.metadata.name === ourName);
      assert.ok(ourRole, `${ourName} not in deploy/rbac.yaml`);
      assert.deepEqual(ruleSet(ourRole), ruleSet(upstream));
    });
  }

  test("each ClusterRole is bound to the ServiceAccount the Deployment runs as", () => {
    for (const ourName of Object.values(counterparts)) {
      const binding = ours.find(
        (o) => o.kind === "ClusterRoleBinding" && (o.roleRef as { name?: string })?.name === ourName,
      );
      const subjects = (binding?.subjects ?? []) as { kind: string; name: string; namespace?: string }[];
      assert.deepEqual(subjects, [
        { kind: "ServiceAccount", name: "switchyard-slice-controller", namespace: "kube-system" },
      ]);
    }
  });
});

describe("deploy/rbac.yaml grants nothing beyond upstream's roles but its Lease", () => {
  test("no other ClusterRole; the one Role touches only the leader-election Lease in kube-system", () => {
    const clusterRoles = ours.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata.name);
    assert.deepEqual(clusterRoles.sort(), Object.values(counterparts).sort());
    const roles = ours.filter((o) => o.kind === "Role");
    assert.equal(roles.length, 1);
    const [lease] = roles;
    assert.equal(lease?.metadata.namespace, "kube-system");
    assert.deepEqual(ruleSet(lease), [
      "groups=coordination.k8s.io resources=leases verbs=create names= urls=",
      "groups=coordination.k8s.io resources=leases verbs=get,update names=switchyard-slice-controller urls=",
    ]);
  });
});

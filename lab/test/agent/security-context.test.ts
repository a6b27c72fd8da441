import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import {
  defaultCapabilities,
  passwdGroupOf,
  processIdentity,
  setprivArgv,
} from "../../src/agent/security-context.js";

const pod = (securityContext: NonNullable<Pod["spec"]>["securityContext"] = {}): Pod => ({
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
  spec: { securityContext, containers: [] },
});
const noPasswd = () => undefined;

describe("a container's identity from the pod's and the container's securityContext", () => {
  test("nothing said: root, containerd's 14 default capabilities, no inheritable ones", () => {
    const id = processIdentity(pod(), { name: "app" }, noPasswd);
    assert.ok(!("error" in id));
    assert.deepEqual([id.uid, id.gid, id.groups, id.noNewPrivs, id.readOnlyRoot], [0, 0, [], false, false]);
    assert.equal(defaultCapabilities.length, 14);
    assert.deepEqual(setprivArgv(id), [
      "setpriv",
      `--bounding-set=-all${defaultCapabilities.map((c) => `,+${c}`).join("")}`,
      "--inh-caps=-all",
      "--",
    ]);
  });

  test("the container's fields win over the pod's; groups from supplementalGroups and fsGroup", () => {
    const id = processIdentity(
      pod({ runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [4000], fsGroup: 2000 }),
      {
        name: "app",
        securityContext: {
          runAsUser: 1001,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE", "CAP_NET_RAW"] },
        },
      },
      noPasswd,
    );
    assert.ok(!("error" in id));
    assert.deepEqual(setprivArgv(id), [
      "setpriv",
      "--bounding-set=-all,+net_bind_service,+net_raw",
      "--inh-caps=-all",
      "--reuid=1001",
      "--regid=3000",
      "--groups=4000,2000",
      "--no-new-privs",
      "--",
    ]);
    assert.equal(id.readOnlyRoot, true);
  });

  test("runAsUser without runAsGroup: the image's passwd names the group, else 0", () => {
    const passwd = "root:x:0:0::/root:/bin/sh\nnobody:x:65534:65533::/:/sbin/nologin\n";
    const lookup = (uid: number) => passwdGroupOf(passwd, uid);
    const id = (uid: number) => processIdentity(pod({ runAsUser: uid }), { name: "app" }, lookup);
    assert.equal((id(65534) as { gid: number }).gid, 65533);
    assert.equal((id(1234) as { gid: number }).gid, 0);
  });

  test("drop one, privileged, add ALL", () => {
    const drop = processIdentity(
      pod(),
      { name: "a", securityContext: { capabilities: { drop: ["NET_RAW"] } } },
      noPasswd,
    );
    assert.ok(!("error" in drop) && drop.capabilities !== "all");
    assert.deepEqual(
      drop.capabilities,
      defaultCapabilities.filter((c) => c !== "net_raw"),
    );
    const privileged = processIdentity(pod(), { name: "a", securityContext: { privileged: true } }, noPasswd);
    assert.ok(!("error" in privileged));
    assert.deepEqual(setprivArgv(privileged), ["setpriv", "--inh-caps=-all", "--"]);
    const all = processIdentity(
      pod(),
      { name: "a", securityContext: { capabilities: { add: ["ALL"] } } },
      noPasswd,
    );
    assert.ok(!("error" in all) && all.capabilities === "all");
  });

  test("runAsNonRoot that cannot hold: the kubelet's words", () => {
    assert.deepEqual(processIdentity(pod({ runAsNonRoot: true }), { name: "app" }, noPasswd), {
      error: 'container has runAsNonRoot and image will run as root (pod: "web_shop(u-1)", container: app)',
    });
    assert.deepEqual(
      processIdentity(
        pod({ runAsNonRoot: true }),
        { name: "app", securityContext: { runAsUser: 0 } },
        noPasswd,
      ),
      { error: `container's runAsUser breaks non-root policy (pod: "web_shop(u-1)", container: app)` },
    );
    assert.ok(
      !("error" in processIdentity(pod({ runAsNonRoot: true, runAsUser: 7 }), { name: "app" }, noPasswd)),
    );
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { emptyDirAccess, fileAccess, tokenAccess, volumeOwners } from "../../src/agent/volume-ownership.js";

const pod = (podUser: number | undefined, users: (number | undefined)[], fsGroup?: number): Pod => ({
  spec: {
    securityContext: {
      ...(podUser === undefined ? {} : { runAsUser: podUser }),
      ...(fsGroup ? { fsGroup } : {}),
    },
    containers: users.map((u, i) => ({
      name: `c${i}`,
      ...(u === undefined ? {} : { securityContext: { runAsUser: u } }),
    })),
  },
});

test("the fsUser is the one user every container runs as; none when one has none or two differ", () => {
  assert.deepEqual(volumeOwners(pod(1000, [undefined, undefined])), { fsUser: 1000 });
  assert.deepEqual(volumeOwners(pod(undefined, [7, 7])), { fsUser: 7 });
  assert.deepEqual(volumeOwners(pod(undefined, [7, undefined])), {});
  assert.deepEqual(volumeOwners(pod(1000, [1001, undefined])), {});
  assert.deepEqual(volumeOwners(pod(undefined, [], 2000)), { fsGroup: 2000 });
});

test("a token: the volume's mode for root pods, 0600 for the fsUser, 0640 with an fsGroup", () => {
  assert.deepEqual(tokenAccess({}, 0o644), { mode: 0o644 });
  assert.deepEqual(tokenAccess({ fsUser: 65532 }, 0o644), { mode: 0o600, uid: 65532 });
  assert.deepEqual(tokenAccess({ fsUser: 1000, fsGroup: 2000 }, 0o644), {
    mode: 0o640,
    uid: 1000,
    gid: 2000,
  });
});

test("with an fsGroup: files readable by the group, emptyDirs its with setgid", () => {
  assert.deepEqual(fileAccess({}, 0o400), { mode: 0o400 });
  assert.deepEqual(fileAccess({ fsGroup: 2000 }, 0o400), { mode: 0o440, gid: 2000 });
  assert.deepEqual(emptyDirAccess({}), { mode: 0o777 });
  assert.deepEqual(emptyDirAccess({ fsGroup: 2000 }), { mode: 0o2777, gid: 2000 });
});

// listAll's pages, and client-go's pager fallback when a continue token expires between two pages.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isResourceExpired } from "../../src/rest/api-error.js";
import { type ListOptions, listAll, type RestClient } from "../../src/rest/client.js";
import { pods } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { makePod } from "../helpers.js";

/** The fake, with each list call's options recorded and `between` run after each page it answered. */
function recording(api: FakeApi, between: (page: number) => unknown = () => {}) {
  const asked: ListOptions[] = [];
  const client = {
    list: async (res, opts = {}) => {
      asked.push({ ...opts });
      const page = await api.list(res, opts);
      await between(asked.length);
      return page;
    },
  } as Pick<RestClient, "list"> as RestClient;
  return { client, asked };
}

async function seeded(n: number): Promise<FakeApi> {
  const api = new FakeApi();
  for (let i = 0; i < n; i++) await api.seed(pods, makePod("ns", `p${i}`));
  return api;
}

const names = (items: { metadata?: { name?: string } }[]) => items.map((i) => i.metadata?.name);

describe("listAll", () => {
  test("follows continue tokens and keeps the first page's resourceVersion", async () => {
    const api = await seeded(5);
    const { client, asked } = recording(api);
    const list = await listAll(client, pods, { limit: 2, resourceVersion: "0" });
    assert.deepEqual(names(list.items), ["p0", "p1", "p2", "p3", "p4"]);
    assert.equal(list.metadata.resourceVersion, api.resourceVersion);
    assert.equal(asked.length, 3);
    // Only the first page carries the resourceVersion; the others carry the token instead.
    assert.deepEqual(
      asked.map((o) => [o.resourceVersion, Boolean(o.continue)]),
      [
        ["0", false],
        [undefined, true],
        [undefined, true],
      ],
    );
  });

  test("an expired continue token turns into one full list without a limit, the pages so far dropped", async () => {
    const api = await seeded(5);
    // Between the first two pages another client writes, and etcd is compacted past the first page's revision.
    const { client, asked } = recording(api, async (page) => {
      if (page !== 1) return;
      await api.seed(pods, makePod("ns", "p5"));
      api.compact();
    });
    const list = await listAll(client, pods, { limit: 2, labelSelector: "app" });
    assert.deepEqual(names(list.items), ["p0", "p1", "p2", "p3", "p4", "p5"]);
    assert.equal(list.metadata.resourceVersion, api.resourceVersion);
    assert.deepEqual(
      asked.map((o) => [o.limit, Boolean(o.continue), o.labelSelector]),
      [
        [2, false, "app"],
        [2, true, "app"],
        [undefined, false, "app"],
      ],
    );
  });

  test("an expired first page (no continue token) and other failures are the caller's", async () => {
    const api = await seeded(3);
    api.failNext("list", 410);
    await assert.rejects(listAll(api, pods, { limit: 2, resourceVersion: "1" }), isResourceExpired);
    const { client } = recording(api, (page) => {
      if (page === 1) api.failNext("list", 500);
    });
    await assert.rejects(listAll(client, pods, { limit: 2 }), /500/);
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { dropNullFields, parseApiJson } from "../../src/rest/decode.js";
import { ndjson } from "../../src/rest/ndjson.js";
import { endpointSlices } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";

// The placeholder slice exactly as kube-apiserver v1.37.2 returns it for a Service with no endpoints.
const placeholder =
  '{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","metadata":{"name":"web-x1","namespace":"shop",' +
  '"labels":{"kubernetes.io/service-name":"web"},"creationTimestamp":"2026-12-01T09:00:00Z"},' +
  '"addressType":"IPv4","endpoints":null,"ports":null}';

describe("API JSON decoding", () => {
  test("a null field reads as absent, at any depth", () => {
    const slice = parseApiJson(placeholder) as EndpointSlice;
    assert.equal("endpoints" in slice, false);
    assert.equal("ports" in slice, false);
    assert.equal(slice.metadata?.labels?.["kubernetes.io/service-name"], "web");
    const nested = dropNullFields({ a: { b: null, c: [{ d: null, e: 1 }], f: {} } });
    assert.deepEqual(nested, { a: { c: [{ e: 1 }], f: {} } });
  });

  test("array elements, empty lists and maps, and scalars are kept as sent", () => {
    assert.deepEqual(parseApiJson('{"a":[],"b":{},"c":[null,1],"d":0,"e":"","f":false}'), {
      a: [],
      b: {},
      c: [null, 1],
      d: 0,
      e: "",
      f: false,
    });
    assert.equal(parseApiJson("null"), null);
  });

  test("watch lines are decoded the same way", async () => {
    const line = `{"type":"ADDED","object":${placeholder}}\n`;
    const events: unknown[] = [];
    const chunks = (async function* () {
      yield Buffer.from(line.slice(0, 40));
      yield Buffer.from(line.slice(40));
    })();
    for await (const event of ndjson(chunks)) {
      events.push(event);
    }
    const object = (events[0] as { object: EndpointSlice }).object;
    assert.equal("endpoints" in object, false);
  });

  test("FakeApi answers as HttpRestClient decodes: nulls it stores come back absent", async () => {
    const api = new FakeApi();
    const stored = JSON.parse(placeholder) as EndpointSlice;
    await api.seed(endpointSlices, stored);
    const got = await api.get(endpointSlices, "web-x1", { namespace: "shop" });
    assert.equal("endpoints" in got, false);
    const list = await api.list(endpointSlices, { namespace: "shop" });
    assert.equal("ports" in (list.items[0] ?? {}), false);
  });
});

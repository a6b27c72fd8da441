import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { parseDuration } from "../../src/plugin/pkg/duration.js";
import { parseKubernetes } from "../../src/plugins/kubernetes/setup.js";

function parse(body: string, keys = "cluster.local") {
  const [block] = parseCorefile(`${keys} {\n${body}\n}\n`, { env: {} });
  const stanza = block?.stanzas[0];
  assert.ok(stanza);
  return parseKubernetes(stanza, ["cluster.local."]);
}

describe("kubernetes setup", () => {
  test("the stock stanza", () => {
    const o = parse(
      "kubernetes cluster.local in-addr.arpa ip6.arpa {\n pods insecure\n fallthrough in-addr.arpa ip6.arpa\n ttl 30\n}",
    );
    assert.deepEqual(o.zones, ["cluster.local.", "in-addr.arpa.", "ip6.arpa."]);
    assert.equal(o.primaryZone, "cluster.local.");
    assert.equal(o.podMode, "insecure");
    assert.deepEqual(o.fallthrough, ["in-addr.arpa.", "ip6.arpa."]);
    assert.equal(o.ttl, 30);
  });

  test("defaults: block zones, ttl 5, pods disabled, no fallthrough", () => {
    const o = parse("kubernetes");
    assert.deepEqual(o.zones, ["cluster.local."]);
    assert.equal(o.ttl, 5);
    assert.equal(o.podMode, "disabled");
    assert.equal(o.fallthrough, undefined);
    assert.equal(o.startupTimeoutMs, 5000);
  });

  test("other options", () => {
    const o = parse(
      "kubernetes {\n namespaces a b\n endpoint_pod_names\n ignore empty_service\n noendpoints\n startup_timeout 1m30s\n fallthrough\n}",
    );
    assert.deepEqual([...o.namespaces], ["a", "b"]);
    assert.equal(o.endpointPodNames, true);
    assert.equal(o.ignoreEmptyService, true);
    assert.equal(o.endpoints, false);
    assert.equal(o.startupTimeoutMs, 90000);
    assert.deepEqual(o.fallthrough, []);
  });

  const bad: [string, RegExp][] = [
    [
      "kubernetes {\n ttl 3601\n}",
      /plugin\/kubernetes: Corefile:3 - Error during parsing: ttl must be in range \[0, 3600\]: 3601/,
    ],
    ["kubernetes {\n ttl\n}", /Corefile:3 - .*Wrong argument count/],
    ["kubernetes {\n pods sometimes\n}", /Corefile:3 - .*wrong value for pods: sometimes/],
    ["kubernetes {\n ignore nothing\n}", /unable to parse ignore value: 'nothing'/],
    ["kubernetes {\n frobnicate\n}", /Corefile:3 - .*unknown property 'frobnicate'/],
    ["kubernetes in-addr.arpa", /non-reverse zone name must be used/],
    ["kubernetes {\n startup_timeout soon\n}", /invalid startup_timeout 'soon'/],
  ];
  for (const [body, error] of bad) {
    test(`rejects ${JSON.stringify(body)}`, () => assert.throws(() => parse(body), error));
  }

  test("parseDuration", () => {
    assert.equal(parseDuration("5s"), 5000);
    assert.equal(parseDuration("250ms"), 250);
    assert.equal(parseDuration("1h"), 3600000);
    assert.equal(parseDuration("5"), undefined);
  });
});

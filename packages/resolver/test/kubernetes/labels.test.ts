// `labels` and `namespace_labels`: parsing as CoreDNS (metav1.LabelSelector operators only), and answers
// from a fixture cluster that filters as the API server does.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { answer } from "../../src/plugins/kubernetes/answer.js";
import { parseLabelSelector } from "../../src/plugins/kubernetes/label-selector.js";
import { parseKubernetes } from "../../src/plugins/kubernetes/setup.js";
import { rcodeName, typeNumber } from "../../src/wire/constants.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { fixtureCluster } from "./fixture.js";

function parse(lines: string) {
  const [block] = parseCorefile(
    `cluster.local in-addr.arpa {\nkubernetes cluster.local in-addr.arpa {\n${lines}\n}\n}\n`,
    {
      env: {},
    },
  );
  const stanza = block?.stanzas[0];
  assert.ok(stanza);
  return parseKubernetes(stanza, ["cluster.local.", "in-addr.arpa."]);
}

async function ask(lines: string, qname: string, qtype = "A"): Promise<{ rcode: string; answer: string[] }> {
  const opts = parse(lines);
  const view = fixtureCluster({
    ...(opts.labelSelector ? { labels: opts.labelSelector } : {}),
    ...(opts.namespaceLabelSelector ? { namespaceLabels: opts.namespaceLabelSelector } : {}),
  });
  const out = await answer(view, opts, newQuery(qname, typeNumber(qtype) ?? 0));
  assert.equal(out.action, "reply");
  if (out.action !== "reply") throw new Error("unreachable");
  return { rcode: rcodeName(out.reply.rcode), answer: out.reply.answer.map(formatRecord) };
}

describe("label selectors", () => {
  test("canonical text: sorted keys and values, = for ==", () => {
    const s = parseLabelSelector("env in (qa, staging),app==web, !legacy,tier");
    assert.equal(s.text, "app=web,env in (qa,staging),!legacy,tier");
    assert.equal(s.matches({ app: "web", env: "qa", tier: "x" }), true);
    assert.equal(s.matches({ app: "web", env: "prod", tier: "x" }), false);
    assert.equal(s.matches({ app: "web", env: "qa", tier: "x", legacy: "" }), false);
    assert.equal(s.matches(undefined), false);
    assert.equal(parseLabelSelector("a notin (b)").matches({}), true);
    assert.equal(parseLabelSelector("a=").matches({ a: "" }), true);
    assert.equal(parseLabelSelector("example.com/a=b").text, "example.com/a=b");
  });

  test("what metav1.LabelSelector cannot hold, and bad syntax, are errors", () => {
    for (const bad of ["a!=b", "a>1", "a<1", "a in b", "a in (b", "a=b,", "=b", "a=b c", "a/b/c", "a=-b"])
      assert.throws(() => parseLabelSelector(bad), Error, bad);
  });
});

describe("kubernetes labels / namespace_labels options", () => {
  test("arguments are joined into one selector", () => {
    const o = parse("labels env in (prod, qa),app=web\nnamespace_labels team=a");
    assert.equal(o.labelSelector?.text, "app=web,env in (prod,qa)");
    assert.equal(o.namespaceLabelSelector?.text, "team=a");
  });

  test("errors as CoreDNS words them", () => {
    assert.throws(() => parse("labels"), /Wrong argument count/);
    assert.throws(
      () => parse("labels a!=b"),
      /^PluginError: plugin\/kubernetes: unable to parse label selector value: 'a!=b': "!=" is not a valid label selector operator$/,
    );
    assert.throws(
      () => parse("namespace_labels a in"),
      /unable to parse namespace_label selector value: 'a in'/,
    );
    assert.throws(
      () => parse("namespaces testns\nnamespace_labels team=a"),
      /namespaces and namespace_labels cannot both be set/,
    );
  });

  test("labels: only matching Services (and their slices) are served", async () => {
    const lines = "labels app=web";
    assert.deepEqual((await ask(lines, "svc1.testns.svc.cluster.local.")).answer, [
      "svc1.testns.svc.cluster.local. 5 IN A 172.30.0.10",
    ]);
    assert.equal((await ask(lines, "hdls.testns.svc.cluster.local.")).rcode, "NXDOMAIN");
    assert.equal((await ask(lines, "svc1.other.svc.cluster.local.")).rcode, "NXDOMAIN");
    // The unlabelled ClusterIP has no Service behind it any more.
    assert.deepEqual((await ask(lines, "10.0.30.172.in-addr.arpa.", "PTR")).answer, [
      "10.0.30.172.in-addr.arpa. 5 IN PTR svc1.testns.svc.cluster.local.",
    ]);
    assert.equal((await ask(lines, "40.0.30.172.in-addr.arpa.", "PTR")).rcode, "NXDOMAIN");
    const db = await ask("labels app in (db)", "hdls.testns.svc.cluster.local.");
    assert.equal(db.answer.length, 3);
  });

  test("namespace_labels: only matching namespaces exist", async () => {
    const lines = "namespace_labels team in (a)";
    assert.equal((await ask(lines, "svc1.testns.svc.cluster.local.")).rcode, "NOERROR");
    assert.equal((await ask(lines, "svc1.other.svc.cluster.local.")).rcode, "NXDOMAIN");
    assert.equal((await ask(lines, "other.svc.cluster.local.")).rcode, "NXDOMAIN");
    assert.equal((await ask("namespace_labels !team", "svc1.testns.svc.cluster.local.")).rcode, "NXDOMAIN");
  });
});

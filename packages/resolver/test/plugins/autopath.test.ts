import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { searchFromResolvConf } from "../../src/plugin/pkg/resolv-conf.js";
import { parseAutoPath } from "../../src/plugins/autopath/options.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { askFull, chainOf } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

// Search path of a pod in namespace `ns`, plus one site domain: the file form's usual shape.
const dir = mkdtempSync(join(tmpdir(), "autopath-"));
const RESOLV = join(dir, "resolv.conf");
writeFileSync(
  RESOLV,
  "nameserver 10.96.0.10\nsearch ns.svc.cluster.local svc.cluster.local cluster.local Example.COM\n",
);
mkdirSync(join(dir, "a-directory"));

const A = 1;
const AAAA = 28;

const backend = () =>
  staticZone([
    "web.example.com. 300 IN A 192.0.2.10",
    "api.ns.svc.cluster.local. 30 IN A 10.96.0.20",
    "db.svc.cluster.local. 30 IN AAAA fd00::5",
    "bare. 60 IN A 192.0.2.99",
  ]);

function stanzas(body: string) {
  return parseCorefile(`.:53 {\n${body}\n}\n`, { env: {} })[0]?.stanzas ?? [];
}

describe("autopath options", () => {
  test("a resolv.conf search list: the last search or domain line wins, normalised, then the bare name", () => {
    assert.deepEqual(searchFromResolvConf("domain a.test\nsearch B.test c.test.\noptions ndots:5\n"), [
      "b.test.",
      "c.test.",
    ]);
    assert.deepEqual(searchFromResolvConf("search b.test\ndomain A.Test extra\n"), ["a.test."]);
    assert.deepEqual(searchFromResolvConf("nameserver 1.1.1.1\n"), []);
    assert.deepEqual(parseAutoPath(stanzas(` autopath ${RESOLV}`), ["."]).search, [
      "ns.svc.cluster.local.",
      "svc.cluster.local.",
      "cluster.local.",
      "example.com.",
      "",
    ]);
  });

  test("zones come from the arguments before RESOLV-CONF, else from the server block", () => {
    assert.deepEqual(parseAutoPath(stanzas(` autopath @kubernetes`), ["cluster.local."]), {
      zones: ["cluster.local."],
      search: [],
      source: "kubernetes",
    });
    assert.deepEqual(parseAutoPath(stanzas(` autopath 10.0.0.0/8 Example.org @kubernetes`), ["."]).zones, [
      "10.in-addr.arpa.",
      "example.org.",
    ]);
  });

  test("a directory opens as an empty file, as it does for miekg/dns", () => {
    assert.deepEqual(parseAutoPath(stanzas(` autopath ${join(dir, "a-directory")}`), ["."]).search, [""]);
  });

  test("errors in CoreDNS's words", () => {
    const cases: [string, string][] = [
      [" autopath", "plugin/autopath: no resolv-conf specified"],
      [` autopath ${RESOLV} {\n  x\n }`, "plugin/autopath: no resolv-conf specified"],
      [
        " autopath /nonexistent/resolv.conf",
        'plugin/autopath: failed to parse "/nonexistent/resolv.conf": open /nonexistent/resolv.conf: no such file or directory',
      ],
      [' autopath ""', 'plugin/autopath: failed to parse "": open : no such file or directory'],
      [
        " autopath @hosts\n hosts {\n  192.0.2.1 a.test\n }",
        "plugin/autopath: hosts does not implement the AutoPather interface",
      ],
    ];
    for (const [body, message] of cases) assert.throws(() => chainOf(body), { message }, body);
  });

  test("@NAME for a plugin the block lacks turns autopath off without an error, as upstream", async () => {
    const zone = backend();
    const { sites } = chainOf(" autopath @kubernetes", zone);
    const reply = await askFull(sites, newQuery("web.ns.svc.cluster.local.", A));
    assert.equal(reply?.rcode, 3);
    assert.deepEqual(
      zone.seen.map((m) => m.question[0]?.name),
      ["web.ns.svc.cluster.local."],
    );
  });
});

describe("autopath walk", () => {
  test("answers with a CNAME from the asked name to the first search name that resolves", async () => {
    const zone = backend();
    const { sites, metrics } = chainOf(` autopath ${RESOLV}`, zone);
    const reply = await askFull(sites, newQuery("web.ns.svc.cluster.local.", A));
    assert.equal(reply?.rcode, 0);
    assert.equal(reply?.question[0]?.name, "web.ns.svc.cluster.local.");
    assert.deepEqual(reply?.answer.map(formatRecord), [
      "web.ns.svc.cluster.local. 300 IN CNAME web.example.com.",
      "web.example.com. 300 IN A 192.0.2.10",
    ]);
    assert.deepEqual(
      zone.seen.map((m) => m.question[0]?.name),
      ["web.ns.svc.cluster.local.", "web.svc.cluster.local.", "web.cluster.local.", "web.example.com."],
    );
    assert.match(await metrics.text(), /coredns_autopath_success_total\{server="dns:\/\/:53"\} 1/);
  });

  test("a first try that resolves goes back as it is, still counted as autopathed", async () => {
    const { sites, metrics } = chainOf(` autopath ${RESOLV}`, backend());
    const reply = await askFull(sites, newQuery("api.ns.svc.cluster.local.", A));
    assert.deepEqual(reply?.answer.map(formatRecord), ["api.ns.svc.cluster.local. 30 IN A 10.96.0.20"]);
    assert.match(await metrics.text(), /coredns_autopath_success_total\{server="dns:\/\/:53"\} 1/);
  });

  test("NODATA ends the walk: no record to point a CNAME at, the question put back", async () => {
    const { sites } = chainOf(` autopath ${RESOLV}`, backend());
    const reply = await askFull(sites, newQuery("DB.ns.svc.cluster.local.", A));
    assert.equal(reply?.rcode, 0);
    assert.equal(reply?.question[0]?.name, "DB.ns.svc.cluster.local.");
    assert.deepEqual(reply?.answer, []);
  });

  test("the bare name is the last try", async () => {
    const { sites } = chainOf(` autopath ${RESOLV}`, backend());
    const reply = await askFull(sites, newQuery("bare.ns.svc.cluster.local.", A));
    assert.deepEqual(reply?.answer.map(formatRecord), [
      "bare.ns.svc.cluster.local. 60 IN CNAME bare.",
      "bare. 60 IN A 192.0.2.99",
    ]);
  });

  test("when no name resolves the first reply goes back, its question in the search path's case", async () => {
    const zone = backend();
    const { sites, metrics } = chainOf(` autopath ${RESOLV}`, zone);
    const reply = await askFull(sites, newQuery("Nope.NS.svc.cluster.local.", AAAA));
    assert.equal(reply?.rcode, 3);
    assert.equal(reply?.question[0]?.name, "Nope.ns.svc.cluster.local.");
    assert.equal(zone.seen.length, 5);
    assert.equal(zone.seen.at(-1)?.question[0]?.name, "Nope.");
    assert.doesNotMatch(await metrics.text(), /coredns_autopath_success_total\{/);
  });

  test("queries outside the first search domain or the zones go straight on", async () => {
    const zone = backend();
    const { sites } = chainOf(` autopath ${RESOLV}`, zone);
    await askFull(sites, newQuery("web.svc.cluster.local.", A));
    const other = chainOf(` autopath example.org ${RESOLV}`, zone);
    await askFull(other.sites, newQuery("web.ns.svc.cluster.local.", A));
    assert.deepEqual(
      zone.seen.map((m) => m.question[0]?.name),
      ["web.svc.cluster.local.", "web.ns.svc.cluster.local."],
    );
  });

  test("the first search domain itself leaves no base name: SERVFAIL, as upstream's TrimZone", async () => {
    const zone = backend();
    const { sites } = chainOf(` autopath ${RESOLV}`, zone);
    const reply = await askFull(sites, newQuery("ns.svc.cluster.local.", A));
    assert.equal(reply?.rcode, 2);
    assert.equal(zone.seen.length, 0);
  });

  test("an empty search list autopaths nothing", async () => {
    const empty = join(dir, "empty.conf");
    writeFileSync(empty, "nameserver 10.0.0.1\n");
    const zone = backend();
    const { sites } = chainOf(` autopath ${empty}`, zone, new Metrics());
    assert.equal((await askFull(sites, newQuery("web.example.com.", A)))?.answer.length, 1);
    assert.equal(zone.seen.length, 1);
  });
});

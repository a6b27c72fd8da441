import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { differentialSkip, type Pair, type Server, startPair } from "../src/testing/differential.js";
import { nxdomainUpstream } from "../src/testing/process.js";

// The metrics a Prometheus user scrapes, compared with CoreDNS's binary on the same Corefile: every coredns_*
// family that CoreDNS exposes after the same queries must be exposed by ours with the same HELP and TYPE lines.
const skip = differentialSkip();

const scrape = async (s: Server) =>
  (await fetch(`http://127.0.0.1:${s.free.get("{{FREE1}}")}/metrics`)).text();

/**
 * `# HELP` and `# TYPE` lines of the coredns_* families, sorted. CoreDNS registers the metrics of every plugin
 * compiled in when it starts, so its scrape also shows families of plugins this Corefile does not use (`hosts`,
 * `local`); ours registers a plugin's metrics when the plugin is set up. Those are left out.
 */
const families = (text: string) =>
  text
    .split("\n")
    .filter((l) => /^# (HELP|TYPE) coredns_/.test(l) && !/coredns_(hosts|local)_/.test(l))
    .sort();

/**
 * The samples of one family, each with its labels sorted by name: Go's client writes them sorted, ours in the
 * order they were declared, which the exposition format leaves free.
 */
const samples = (text: string, family: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith(`${family}{`))
    .map((l) => {
      const [, labels = "", value = ""] = /^[^{]+\{(.*)\} (.*)$/.exec(l) ?? [];
      return `${family}{${(labels.match(/[a-z_]+="[^"]*"/g) ?? []).sort().join(",")}} ${value}`;
    })
    .sort();

describe("metrics, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  let upstream: { port: number; close(): void };
  before(async () => {
    upstream = await nxdomainUpstream();
    pair = await startPair(
      [
        ".:{{PORT}} {",
        "    errors",
        "    health 127.0.0.1:{{FREE2}}",
        "    ready 127.0.0.1:{{FREE3}}",
        "    prometheus 127.0.0.1:{{FREE1}}",
        "    reload 2s 1s",
        `    forward . 127.0.0.1:${upstream.port}`,
        "    cache 30",
        "    loadbalance",
        "}",
        "",
      ].join("\n"),
    );
    for (const name of ["a.example", "b.example", "a.example"]) await pair.dig(name, "A");
    // The health plugin times its own /health every second; wait until both have done it once.
    for (const s of [pair.ours, pair.coredns])
      await eventually(`${s.name}'s first health self-probe`, async () =>
        /coredns_health_request_duration_seconds_count 1*[1-9]/.test(await scrape(s)),
      );
  });
  after(async () => {
    await pair?.stop();
    upstream?.close();
  });

  test("every coredns_* family CoreDNS shows, ours shows, with the same help and type", async () => {
    const ours = new Set(families(await scrape(pair.ours)));
    const missing = families(await scrape(pair.coredns)).filter((l) => !ours.has(l));
    assert.deepEqual(missing, []);
  });

  test("the forward connection cache: the same hits and misses for the same queries", async () => {
    for (const family of ["coredns_proxy_conn_cache_hits_total", "coredns_proxy_conn_cache_misses_total"]) {
      const ours = samples(await scrape(pair.ours), family);
      assert.ok(ours.length > 0, family);
      assert.deepEqual(ours, samples(await scrape(pair.coredns), family), family);
    }
  });

  test("the health self-probe counts requests and no failures, as CoreDNS's", async () => {
    const text = await scrape(pair.ours);
    assert.match(text, /^coredns_health_request_duration_seconds_bucket\{le="0.00025"\} \d+$/m);
    assert.match(text, /^coredns_health_request_duration_seconds_bucket\{le="2.5"\} [1-9]\d*$/m);
    assert.match(text, /^coredns_health_request_failures_total 0$/m);
  });
});

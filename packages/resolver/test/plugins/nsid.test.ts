import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, test } from "node:test";
import type { Handler, Result } from "../../src/plugin/handler.js";
import { withNsid } from "../../src/plugins/nsid/nsid.js";
import { Resolver } from "../../src/resolver.js";
import type { Edns, Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { parseRecord } from "../../src/wire/presentation.js";
import { askFast, askFull, chainOf } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

const NSID_ASKED: Edns = {
  udpSize: 1232,
  version: 0,
  dnssecOk: false,
  options: [{ code: 3, data: Buffer.alloc(0) }],
};
const zone = () => staticZone(["a.example.org. 300 IN A 192.0.2.1"]);
const nsidOf = (m: Message | undefined) => m?.edns?.options.find((o) => o.code === 3)?.data.toString();

describe("nsid", () => {
  test("a query asking for NSID gets the configured words, joined by spaces", async () => {
    const { sites } = chainOf(" nsid Use The Force", zone());
    const reply = await askFull(sites, newQuery("a.example.org.", 1, 1, NSID_ASKED));
    assert.equal(nsidOf(reply), "Use The Force");
    assert.equal(reply?.answer.length, 1);
    assert.equal(reply?.edns?.udpSize, 1232);
  });

  test("without an NSID option there is none in the reply; without EDNS no OPT at all", async () => {
    const { sites } = chainOf(" nsid x", zone());
    const plain = { udpSize: 1232, version: 0, dnssecOk: false, options: [] };
    assert.equal(nsidOf(await askFull(sites, newQuery("a.example.org.", 1, 1, plain))), undefined);
    assert.equal((await askFull(sites, newQuery("a.example.org.", 1, 1)))?.edns, undefined);
  });

  test("a reply without OPT gets one with DO set, as upstream's; one it has keeps its options", async () => {
    const { sites } = chainOf(" nsid x", zone());
    assert.equal((await askFull(sites, newQuery("a.example.org.", 1, 1, NSID_ASKED)))?.edns?.dnssecOk, true);
    const own: Edns = {
      udpSize: 4096,
      version: 0,
      dnssecOk: false,
      options: [
        { code: 15, data: Buffer.from([0, 1]) },
        { code: 3, data: Buffer.from("upstream") },
      ],
    };
    const changed = withNsid(own, NSID_ASKED, Buffer.from("me"));
    assert.deepEqual(
      changed.options.map((o) => [o.code, o.data.toString("hex")]),
      [
        [15, "0001"],
        [3, Buffer.from("me").toString("hex")],
      ],
    );
    assert.equal(own.options[1]?.data.toString(), "upstream");
  });

  test("an error reply the server writes gets no NSID, as upstream's is not written through the plugin", async () => {
    const failing: Handler = { name: "f", serveDNS: async (): Promise<Result> => ({ rcode: 2 }) };
    const { sites } = chainOf(" nsid x", failing);
    const reply = await askFull(sites, newQuery("a.example.org.", 1, 1, NSID_ASKED));
    assert.equal(reply?.rcode, 2);
    // The server echoes the query's (empty) NSID option, as CoreDNS's scrubbing does.
    assert.equal(nsidOf(reply), "");
  });

  test("with cache behind it, hits for plain queries come from wire and NSID queries get the option", async () => {
    let calls = 0;
    const backend: Handler = {
      name: "b",
      async serveDNS(_c, w, r) {
        calls++;
        w.write({ ...replyTo(r), answer: [parseRecord("a.example.org. 300 IN A 192.0.2.1")] });
        return { rcode: 0 };
      },
    };
    const { sites } = chainOf(" nsid x\n cache", backend);
    const plain = newQuery("a.example.org.", 1, 2, {
      udpSize: 1232,
      version: 0,
      dnssecOk: false,
      options: [],
    });
    await askFull(sites, plain);
    assert.equal(nsidOf(askFast(sites, plain)), undefined);
    assert.ok(askFast(sites, plain));
    const asking = newQuery("a.example.org.", 1, 3, NSID_ASKED);
    assert.equal(askFast(sites, asking), undefined);
    assert.equal(nsidOf(await askFull(sites, asking)), "x");
    assert.equal(calls, 1);
  });

  test("the host's name by default; once per block, with upstream's wording", async () => {
    const { sites } = chainOf(" nsid", zone());
    assert.equal(nsidOf(await askFull(sites, newQuery("a.example.org.", 1, 1, NSID_ASKED))), hostname());
    for (const body of ["nsid a\n nsid b", "nsid a {\n  b\n }"])
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n ${body}\n}\n`, { file: "Corefile" }),
        /plugin\/nsid: this plugin can only be used once per Server Block$/,
      );
  });
});

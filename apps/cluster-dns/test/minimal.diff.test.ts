import { after, before, describe } from "node:test";
import type { Message } from "@switchyard/resolver";
import { parseRecord, replyTo } from "@switchyard/resolver";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";
import { scriptedUpstream } from "./helpers/upstream.js";

// The minimal plugin, compared with CoreDNS's binary, over forward to an upstream whose replies fill every section.
const skip = differentialSkip();

/** `nx.*` NXDOMAIN with SOA, `nodata.*` SOA only, `deleg.*` a referral; any other name an A with NS and glue. */
function upstreamReply(query: Message): Message {
  const name = query.question[0]?.name ?? ".";
  const reply: Message = { ...replyTo(query), ra: true };
  const soa = parseRecord("test. 60 IN SOA ns.test. host.test. 1 2 3 4 60");
  const ns = parseRecord("test. 60 IN NS ns.test.");
  const glue = parseRecord("ns.test. 60 IN A 192.0.2.53");
  const label = name.split(".")[0]?.toLowerCase();
  if (label === "nx") return { ...reply, rcode: 3, authority: [soa] };
  if (label === "nodata") return { ...reply, authority: [soa] };
  if (label === "deleg") return { ...reply, authority: [ns], additional: [glue] };
  return {
    ...reply,
    answer: [parseRecord(`${name} 60 IN A 192.0.2.1`)],
    authority: [ns],
    additional: [glue],
  };
}

describe("minimal, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  let upstream: { port: number; close(): void };
  before(async () => {
    upstream = await scriptedUpstream(upstreamReply);
    pair = await startPair(`.:{{PORT}} {
    minimal
    cache
    forward . 127.0.0.1:${upstream.port}
}
whoami.test:{{PORT}} {
    minimal
    whoami
}
`);
  });
  after(async () => {
    await pair?.stop();
    upstream?.close();
  });
  compareQueries(
    () => pair,
    [
      ["a.test", "A"],
      ["a.test", "A"],
      ["b.test", "A", "+tcp"],
      ["c.test", "A", "+noedns"],
      ["d.test", "A", "+dnssec"],
      ["nx.test", "A"],
      ["nodata.test", "AAAA"],
      ["deleg.test", "A"],
      ["x.whoami.test", "A"],
    ],
  );
});

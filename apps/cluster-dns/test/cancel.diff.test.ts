import { after, before, describe } from "node:test";
import type { Message } from "@switchyard/resolver";
import { parseRecord, replyTo } from "@switchyard/resolver";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";
import { scriptedUpstream } from "./helpers/upstream.js";

// The cancel plugin, compared with CoreDNS's binary, over forward to an upstream the test starts. Answered
// queries pass through; for one the upstream never answers, `cancel 1s` makes forward give up after its first
// 2 s attempt (SERVFAIL well inside dig's 4 s), where without it forward would keep trying for 5 s.
const skip = differentialSkip();

function upstreamReply(query: Message): Message | undefined {
  const name = query.question[0]?.name ?? ".";
  if (name.startsWith("silent.")) return undefined;
  return { ...replyTo(query), ra: true, answer: [parseRecord(`${name} 60 IN A 192.0.2.1`)] };
}

describe("cancel, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
  before(async () => {
    upstream = await scriptedUpstream(upstreamReply);
    pair = await startPair(`.:{{PORT}} {
    cancel 1s
    forward . 127.0.0.1:${upstream.port}
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
      ["fast.test", "A"],
      ["fast.test", "A", "+tcp"],
      ["silent.test", "A", "+time=4"],
    ],
  );
});

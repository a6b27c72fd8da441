import { after, before, describe } from "node:test";
import { replyTo } from "@switchyard/resolver";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";
import { scriptedUpstream } from "./helpers/upstream.js";

// The header plugin, compared with CoreDNS's binary: response rules on whoami, hosts (behind cache) and forward
// replies, query rules seen by the upstream and by the server's own SERVFAIL.
const skip = differentialSkip();

describe("header, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  let upstream: { port: number; close(): void };
  before(async () => {
    // Empty NOERROR replies that keep the query's RD: what reaches the upstream shows in the reply.
    upstream = await scriptedUpstream((q) => ({ ...replyTo(q), ra: true }));
    pair = await startPair(`whoami.test:{{PORT}} {
    header {
        response clear aa
        response set ra
    }
    whoami
}
hosts.test:{{PORT}} {
    cache
    header {
        response set aa ra
        response clear rd
    }
    hosts {
        10.0.0.1 a.hosts.test
    }
}
fwd.test:{{PORT}} {
    header {
        query clear rd
        response set aa
    }
    forward . 127.0.0.1:${upstream.port}
}
query.test:{{PORT}} {
    header {
        query clear rd
    }
    hosts {
        10.0.0.2 a.query.test
    }
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
      ["x.whoami.test", "A"],
      ["x.whoami.test", "A", "+norecurse", "+tcp"],
      ["a.hosts.test", "A"],
      ["a.hosts.test", "A"],
      ["a.hosts.test", "AAAA", "+norecurse"],
      ["missing.hosts.test", "A"],
      ["x.fwd.test", "A"],
      ["x.fwd.test", "TXT", "+noedns"],
      ["a.query.test", "A"],
      ["missing.query.test", "A"],
    ],
    /status: /,
    (dig) => dig.replace(/(SRV 0 0 )\d+ \./g, "$1<port> ."),
  );
});

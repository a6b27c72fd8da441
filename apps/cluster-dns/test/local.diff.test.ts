import { after, before, describe } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The local plugin, compared with CoreDNS's binary: localhost and the loopback reverse zones, with and without
// the legacy `localhost.<domain>` prefix, other names reaching hosts.
const skip = differentialSkip();

describe("local, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(`.:{{PORT}} {
    local
    hosts {
        10.0.0.1 a.example.org
        fallthrough
    }
}
off.test:{{PORT}} {
    local {
        localhost_prefix off
    }
    hosts {
        10.0.0.2 localhost.off.test
    }
}
`);
  });
  after(() => pair?.stop());
  compareQueries(
    () => pair,
    [
      ["localhost", "A"],
      ["LocalHost", "AAAA", "+tcp"],
      ["localhost", "NS"],
      ["localhost", "SOA"],
      ["localhost", "MX", "+noedns"],
      ["a.b.localhost", "A"],
      ["X.localhost", "AAAA"],
      ["x.localhost", "TXT"],
      ["-x", "127.0.0.1"],
      ["1.0.0.127.in-addr.arpa", "TXT"],
      ["-x", "127.0.0.2"],
      ["9.0.IN-ADDR.ARPA", "PTR"],
      ["255.in-addr.arpa", "SOA"],
      ["localhost.example.net", "A"],
      ["a.example.org", "A"],
      ["localhost.off.test", "A"],
      ["x.localhost", "A"],
    ],
  );
});

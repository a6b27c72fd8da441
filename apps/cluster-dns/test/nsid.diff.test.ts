import { after, before, describe } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The nsid plugin, compared with CoreDNS's binary: dig's +nsid against whoami, and against hosts behind cache.
const skip = differentialSkip();

describe("nsid, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(`whoami.test:{{PORT}} {
    nsid Use The Force
    whoami
}
.:{{PORT}} {
    nsid "edge 1"
    cache
    hosts {
        10.0.0.1 a.example.org
    }
}
`);
  });
  after(() => pair?.stop());
  compareQueries(
    () => pair,
    [
      ["+nsid", "x.whoami.test", "A"],
      ["+nsid", "x.whoami.test", "A", "+tcp", "+dnssec"],
      ["x.whoami.test", "A"],
      ["+nsid", "a.example.org", "A"],
      ["+nsid", "a.example.org", "A"],
      ["a.example.org", "A"],
      ["+nsid", "a.example.org", "AAAA", "+bufsize=1400"],
      ["+nsid", "missing.example.org", "A"],
      ["+nsid", "+noedns", "a.example.org", "A"],
    ],
    /status: /,
    (dig) => dig.replace(/(SRV 0 0 )\d+ \./g, "$1<port> ."),
  );
});

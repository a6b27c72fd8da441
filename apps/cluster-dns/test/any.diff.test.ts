import { after, before, describe } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The any plugin, compared with CoreDNS's binary: ANY gets the RFC 8482 HINFO, other types reach hosts and cache.
const skip = differentialSkip();

describe("any, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    const corefile = `.:{{PORT}} {
    any
    cache
    hosts {
        10.0.0.1 a.example.org
    }
}
`;
    pair = await startPair(corefile);
  });
  after(() => pair?.stop());
  compareQueries(
    () => pair,
    [
      ["a.example.org", "ANY"],
      ["A.Example.Org", "ANY", "+tcp"],
      ["missing.test", "ANY", "+noedns"],
      [".", "ANY", "+dnssec"],
      ["a.example.org", "A"],
      ["a.example.org", "A"],
      ["a.example.org", "AAAA"],
      ["a.example.org", "ANY", "+norecurse", "+cd"],
    ],
  );
});

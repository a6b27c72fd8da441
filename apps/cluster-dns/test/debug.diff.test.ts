import { after, before, describe } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The debug plugin, compared with CoreDNS's binary: it changes nothing a client sees while the chain works
// (what it changes, a crash ending the process, is covered by the unit test), so answers must stay the same.
const skip = differentialSkip();

describe("debug, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(`.:{{PORT}} {
    debug
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
      ["a.example.org", "A"],
      ["a.example.org", "A", "+tcp"],
      ["missing.example.org", "A"],
    ],
  );
});

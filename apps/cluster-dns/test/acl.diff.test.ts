import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The acl plugin, compared with CoreDNS's binary. dig asks from 127.0.0.1, so rules naming 127.0.0.0/8 (or
// not) decide; a dropped query gets no answer from either server.
const skip = differentialSkip();
const execFileAsync = promisify(execFile);

describe("acl, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(`.:{{PORT}} {
    acl blocked.test {
        block net 127.0.0.0/8
    }
    acl filtered.test {
        allow type AAAA
        filter net 127.0.0.1
    }
    acl elsewhere.test {
        block net 10.0.0.0/8 ::1
    }
    acl dropped.test {
        drop type A net 127.0.0.0/8
    }
    hosts {
        10.0.0.1 a.blocked.test a.filtered.test a.elsewhere.test a.dropped.test
        fd00::1 a.filtered.test
    }
}
`);
  });
  after(() => pair?.stop());
  compareQueries(
    () => pair,
    [
      ["a.blocked.test", "A"],
      ["a.blocked.test", "A", "+tcp"],
      ["+noedns", "a.blocked.test", "A"],
      ["a.filtered.test", "A"],
      ["a.filtered.test", "AAAA"],
      ["a.elsewhere.test", "A"],
      ["a.dropped.test", "AAAA"],
      ["a.other.test", "A"],
    ],
  );

  test("a dropped query gets no reply from either", async () => {
    for (const server of [pair.ours, pair.coredns]) {
      const args = ["@127.0.0.1", "-p", String(server.port), "+time=1", "+tries=1", "a.dropped.test", "A"];
      const out = await execFileAsync("dig", args).then(
        (r) => r.stdout,
        (err: { stdout?: string }) => err.stdout ?? "",
      );
      assert.match(out, /timed out/, server.name);
    }
  });
});

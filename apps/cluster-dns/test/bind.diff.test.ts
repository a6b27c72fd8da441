import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { differentialSkip, normaliseDig, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The bind plugin, compared with CoreDNS's binary: two blocks for the same zone on one port, bound to 127.0.0.2
// and (by `except`) 127.0.0.3, answer differently on each address; 127.0.0.1 gets no answer from either.
const skip = differentialSkip();
const execFileAsync = promisify(execFile);

/** dig's normalised answer from one address, or "no answer" when nothing listens there (refused or silent). */
async function digOn(host: string, port: number, name: string): Promise<string> {
  const args = [
    `@${host}`,
    "-p",
    String(port),
    "+time=1",
    "+tries=1",
    "+nocookie",
    "+noall",
    "+answer",
    name,
    "A",
  ];
  return execFileAsync("dig", args).then(
    (r) => normaliseDig(r.stdout),
    (err: { stdout?: string }) =>
      /timed out|connection refused/.test(err.stdout ?? "") ? "no answer" : String(err.stdout),
  );
}

describe("bind, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(
      `.:{{PORT}} {
    bind 127.0.0.2
    hosts {
        10.0.0.2 a.example.org
    }
}
.:{{PORT}} {
    bind 127.0.0.3 127.0.0.4 {
        except 127.0.0.4
    }
    hosts {
        10.0.0.3 a.example.org
    }
}
`,
      {},
      [],
      "127.0.0.2",
    );
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

  test("both banners name each bound listener", () => {
    for (const server of [pair.ours, pair.coredns])
      for (const host of ["127.0.0.2", "127.0.0.3"])
        assert.ok(
          server.output().includes(`.:${server.port} on ${host}\n`),
          `${server.name}: ${server.output()}`,
        );
  });

  test("each address answers from its own block, and unbound ones not at all", async () => {
    for (const server of [pair.ours, pair.coredns]) {
      const on = (host: string) => digOn(host, server.port, "a.example.org");
      assert.match(await on("127.0.0.3"), /a\.example\.org\. 3600 IN A 10\.0\.0\.3/, server.name);
      assert.equal(await on("127.0.0.4"), "no answer", server.name);
      assert.equal(await on("127.0.0.1"), "no answer", server.name);
    }
  });
});

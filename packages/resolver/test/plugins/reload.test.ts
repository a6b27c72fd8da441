import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { parseCorefile } from "../../src/corefile/parse.js";
import { parseReload } from "../../src/plugins/reload/reload.js";
import { Resolver } from "../../src/resolver.js";
import { dig } from "../helpers/clients.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const corefile = (ttl: number) => `cluster.local {
    reload 2s 1s
    kubernetes {
        ttl ${ttl}
    }
}
`;

test("reload: a changed Corefile is applied under load without a lost query; a bad one is logged and ignored", async () => {
  const dir = mkdtempSync(join(tmpdir(), "resolver-reload-"));
  const file = join(dir, "Corefile");
  writeFileSync(file, corefile(30));
  const errors: string[] = [];
  const resolver = Resolver.fromCorefile(readFileSync(file, "utf8"), {
    env: {},
    file,
    readFile: (path) => readFileSync(path, "utf8"),
    deps: { cluster: fixtureCluster(), errorLog: (l) => errors.push(l) },
    address: "127.0.0.1",
    portOverride: 0,
  });
  await resolver.start();
  const port = resolver.servers[0]?.address.port ?? 0;
  // A steady stream of real dig queries, one after another, for the whole test.
  const ttls: string[] = [];
  const failures: string[] = [];
  let loading = true;
  const load = (async () => {
    while (loading) {
      const out = await dig(port, "svc1.testns.svc.cluster.local", "A", "+noall", "+answer").catch(
        (err: Error) => `failed: ${err.message}`,
      );
      const m = /^svc1\.testns\.svc\.cluster\.local\.\s+(\d+)\s+IN\s+A\s+172\.30\.0\.10$/m.exec(out);
      if (m?.[1]) ttls.push(m[1]);
      else failures.push(out);
    }
  })();
  try {
    await eventually("answers from the first Corefile", () => ttls.includes("30"));
    writeFileSync(file, corefile(7));
    await eventually("the new TTL to be served", () => ttls.at(-1) === "7", { timeoutMs: 15_000 });
    writeFileSync(file, corefile(9999));
    await eventually("the bad Corefile to be reported", () => errors.length > 0, { timeoutMs: 15_000 });
    const served = ttls.length;
    await eventually("more answers after the bad Corefile", () => ttls.length > served + 5);
    assert.equal(ttls.at(-1), "7", "the good Corefile keeps running");
    assert.match(
      errors[0] ?? "",
      /^\[ERROR\] plugin\/reload: .*Corefile:4 - .*ttl must be in range \[0, 3600\]: 9999/,
    );
  } finally {
    loading = false;
    await load;
    await resolver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(failures, [], "every query during the reloads got its answer");
  // The load spanned both reloads: answers under the first Corefile, then more than five under the second after
  // the bad one was refused (how many in all depends on the machine's load, so no count is asserted).
  assert.ok(
    ttls.indexOf("30") < ttls.indexOf("7") && ttls.filter((t) => t === "7").length > 5,
    ttls.join(","),
  );
});

test("reload's arguments as CoreDNS reads them: defaults, jitter cut to half, upstream's errors", () => {
  const parse = (line: string) => {
    const stanza = parseCorefile(`. {\n    ${line}\n}\n`, { env: {} })[0]?.stanzas[0];
    assert.ok(stanza);
    return parseReload(stanza);
  };
  assert.deepEqual(parse("reload"), { intervalMs: 30_000, jitterMs: 15_000 });
  assert.deepEqual(parse("reload 10s"), { intervalMs: 10_000, jitterMs: 5_000 });
  assert.deepEqual(parse("reload 1m"), { intervalMs: 60_000, jitterMs: 15_000 });
  assert.deepEqual(parse("reload 5s 0"), { intervalMs: 5_000, jitterMs: 0 });
  assert.deepEqual(parse("reload 5s {\n        ignored\n    }"), { intervalMs: 5_000, jitterMs: 2_500 });
  const refused: [string, string][] = [
    ["reload 1s", "plugin/reload: interval value must be greater or equal to 2s"],
    ["reload 5s 500ms", "plugin/reload: jitter value must be 0 or greater or equal to 1s"],
    ["reload soon", 'plugin/reload: time: invalid duration "soon"'],
    ["reload 5", 'plugin/reload: time: missing unit in duration "5"'],
    [
      "reload 5s 1s 1s",
      "plugin/reload: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after '1s'",
    ],
  ];
  for (const [line, message] of refused) assert.throws(() => parse(line), { message }, line);
});

// Differential setup errors: both servers are started on a Corefile, and what each prints when it refuses it
// is compared (CoreDNS's log.Fatal line against our one stderr line, without our `switchyard-dns: ` prefix).
import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { resolveBinary } from "@switchyard/testbed/upstream";
import { BIN, type Server, startServer, stopServer } from "../../src/testing/differential.js";

/**
 * What a server said when it gave up on the Corefile, or `(started)` once it printed its banner (both name
 * CoreDNS-1.14.7 in it). Polls the child's output; gives up after 30 s.
 */
async function refusal(server: Server): Promise<string> {
  try {
    await eventually(
      `${server.name} to exit or start\n${server.output()}`,
      () => server.child.exitCode !== null || server.output().includes("CoreDNS-1.14.7"),
      { timeoutMs: 30_000 },
    );
    if (server.child.exitCode === null) return "(started)";
    const lines = server.output().trim().split("\n");
    return (lines.at(-1) ?? "").replace(/^switchyard-dns: /, "");
  } finally {
    await stopServer(server);
  }
}

/**
 * One test per Corefile: both servers must print the same error for it. `expected` must match CoreDNS's line,
 * so a case cannot pass by both failing for a reason the case is not about (a bad port, a missing file).
 * `{{PORT}}` becomes a free port, so a Corefile either accepts is served on one.
 */
export function compareSetupErrors(cases: readonly (readonly [corefile: string, expected: RegExp])[]): void {
  for (const [corefile, expected] of cases)
    test(corefile.replace(/\s+/g, " ").slice(0, 90), async () => {
      const coredns = resolveBinary("coredns").path as string;
      const [ours, theirs] = await Promise.all([
        startServer("ours", [process.execPath, BIN], corefile, {}, [], "127.0.0.1"),
        startServer("coredns", [coredns], corefile, {}, [], "127.0.0.1"),
      ]);
      const [a, b] = await Promise.all([refusal(ours), refusal(theirs)]);
      assert.match(b, expected);
      assert.equal(a, b);
    });
}

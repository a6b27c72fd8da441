// The fuzz target: one resolver in its own process, so the fuzzer can watch its memory alone. Prints its
// port as one JSON line, then serves until killed. Each `stats` line on stdin is answered with its
// memory after a full GC (run with --expose-gc), so garbage not yet collected does not look like a leak.
import { createInterface } from "node:readline";
import { Resolver } from "../../src/resolver.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const resolver = Resolver.fromCorefile(
  `.:53 {
    errors
    log
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`,
  {
    env: {},
    deps: { cluster: fixtureCluster(), log: () => {}, errorLog: () => {} },
    address: "127.0.0.1",
    portOverride: 0,
  },
);
await resolver.start();
process.stdout.write(`${JSON.stringify({ port: resolver.servers[0]?.address.port })}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "stats") return;
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed })}\n`);
});

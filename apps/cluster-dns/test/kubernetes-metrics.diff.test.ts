import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { differentialSkip, type Pair, type Server, startPair } from "../src/testing/differential.js";

// The kubernetes plugin's API client metrics, compared with CoreDNS's binary: both servers watch the same real
// kube-apiserver (packages/testbed/upstream's build). Every line CoreDNS shows for the client-go families
// (HELP, TYPE, each series' labels) must be in ours; counts and times may differ. CoreDNS 1.14.7's client-go
// (0.35, WatchListClient on by default) streams its initial lists over the watches, so it shows one request
// per resource and no timed ones; ours lists and then watches, so it also shows the lists' request_duration
// and rate_limiter samples.
const skip = differentialSkip() ?? missingControlPlane();

const corefile = (kubeconfig: string) => `.:{{PORT}} {
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
    }
    prometheus 127.0.0.1:{{FREE1}}
}
`;

const scrape = async (s: Server) =>
  (await fetch(`http://127.0.0.1:${s.free.get("{{FREE1}}")}/metrics`)).text();

const CLIENT = /^coredns_kubernetes_rest_client_/;

/** Each client family's HELP and TYPE lines, and every sample with its value left out and labels sorted. */
function shape(text: string): string[] {
  const lines = text.split("\n");
  const heads = lines.filter((l) => /^# (HELP|TYPE) coredns_kubernetes_rest_client_/.test(l));
  const series = lines
    .filter((l) => CLIENT.test(l))
    .map((l) => {
      const [, name = "", labels = ""] = /^([^{ ]+)(?:\{(.*)\})? /.exec(l) ?? [];
      return `${name}{${(labels.match(/[a-z_]+="[^"]*"/g) ?? []).sort().join(",")}}`;
    });
  return [...new Set([...heads, ...series])].sort();
}

describe("kubernetes client metrics, against CoreDNS v1.14.7", { skip }, () => {
  let cp: TestControlPlane;
  let pair: Pair;
  before(async () => {
    cp = await startControlPlane();
    pair = await startPair(corefile(cp.kubeconfigPath));
  });
  after(async () => {
    await pair?.stop();
    await cp?.stop();
  });

  test("CoreDNS's families, labels and codes, after both synced", async () => {
    const answers = async () => {
      const { ours, coredns } = await pair.dig("kubernetes.default.svc.cluster.local", "A");
      return ours === coredns && /status: NOERROR/.test(coredns);
    };
    await eventually("both to answer from the API", answers, { timeoutMs: 30_000 });
    // Services, EndpointSlices, Namespaces: ours lists and watches each (6), CoreDNS watches each (3).
    const requests = (text: string) =>
      Number(
        /^coredns_kubernetes_rest_client_requests_total\{[^}]*code="200"[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0,
      );
    await eventually(
      "list and watch requests on both",
      async () => requests(await scrape(pair.ours)) >= 6 && requests(await scrape(pair.coredns)) >= 3,
      { timeoutMs: 30_000 },
    );
    const [ours, theirs] = await Promise.all([scrape(pair.ours), scrape(pair.coredns)]);
    assert.ok(
      shape(theirs).some((l) => l.includes('code="200"')),
      theirs,
    );
    const missing = shape(theirs).filter((l) => !shape(ours).includes(l));
    assert.deepEqual(missing, [], `CoreDNS shows, ours does not:\n${missing.join("\n")}`);
  });
});

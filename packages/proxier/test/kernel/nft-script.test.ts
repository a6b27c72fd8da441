// The script the applier sends (element adds gathered per set) leaves the kernel exactly as the
// one-statement-per-operation script does, for the golden cluster's full sync and a partial one.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { renderNFTables } from "../../src/nftables/render.js";
import { buildMaps, nftOptions } from "../../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";
import { canonicalNFTList } from "../nft-list.js";
import * as H from "../upstream-harness.js";
import { kernelTestsUnavailable } from "./topology.js";

const skip = await kernelTestsUnavailable(["nft"]);
if (skip) console.log(`# skipping nft script kernel test: ${skip}`);

describe("nft script with gathered elements", { skip: skip ?? false }, () => {
  const names = [`sy-ns-lines-${process.pid}`, `sy-ns-batch-${process.pid}`];
  after(() => {
    for (const ns of names) H.deleteNetns(ns);
  });

  test("same table after a full and a partial sync as one statement per element", () => {
    const [lines = "", batch = ""] = names;
    for (const ns of names) {
      H.deleteNetns(ns);
      H.createNetns(ns);
    }
    const options = nftOptions("IPv4", { serviceCIDRs: ["172.30.0.0/16"] });
    const services = goldenServices((n) => `172.30.0.${n}`);
    const full = renderNFTables(options, { ...buildMaps("IPv4", services, goldenSlices()), now: 0 });
    assert.ok(full.transaction.script().split("\n").length < full.transaction.toString().split("\n").length);
    H.inNetns(lines, ["nft", "-f", "-"], full.transaction.toString());
    H.inNetns(batch, ["nft", "-f", "-"], full.transaction.script());
    const list = (ns: string) =>
      canonicalNFTList(H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]));
    assert.deepEqual(list(batch), list(lines));

    // Drop one Service: its elements go, its chains are flushed now and deleted later.
    const fewer = services.slice(1);
    const gone = `${services[0]?.metadata?.namespace}/${services[0]?.metadata?.name}`;
    const partial = renderNFTables(
      options,
      { ...buildMaps("IPv4", fewer, goldenSlices()), changedServices: new Set([gone]), now: 1 },
      full.state,
    );
    for (const tx of [partial.cleanup, partial.transaction]) {
      if (!tx) continue;
      H.inNetns(lines, ["nft", "-f", "-"], tx.toString());
      H.inNetns(batch, ["nft", "-f", "-"], tx.script());
    }
    assert.deepEqual(list(batch), list(lines));
  });
});

// The ServiceCIDR watch on the fake API server: the union of every object reaches the
// proxiers on start and on each change (once per distinct set), and an API server without
// the resource gets one warning and no watch.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ServiceCIDR } from "@switchyard/basics";
import { InformerFactory, Logger } from "@switchyard/kube";
import { FakeApi, flushAsync } from "@switchyard/kube/testing";
import { serviceCIDRs, watchServiceCIDRs } from "../src/service-cidrs.js";

const object = (name: string, cidrs: string[]): ServiceCIDR => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "ServiceCIDR",
  metadata: { name },
  spec: { cidrs },
});

function logger() {
  const lines: string[] = [];
  return { lines, logger: new Logger({ level: "info", out: { write: (s: string) => lines.push(s) } }) };
}

test("every change hands the union of all ServiceCIDRs to the proxiers", async () => {
  const api = new FakeApi();
  await api.seed(serviceCIDRs, object("kubernetes", ["10.96.0.0/16", "fd00:96::/112"]));
  const factory = new InformerFactory({ client: api });
  const seen: string[][] = [];
  const watch = await watchServiceCIDRs(api, factory, (c) => seen.push(c), logger().logger);
  assert.ok(watch);
  const abort = new AbortController();
  factory.start(abort.signal);
  assert.equal(await watch.waitForSync(abort.signal), true);
  assert.deepEqual(seen, [["10.96.0.0/16", "fd00:96::/112"]]);

  await api.create(serviceCIDRs, object("extra", ["10.97.0.0/24"]));
  await flushAsync();
  assert.deepEqual(seen.at(-1), ["10.96.0.0/16", "10.97.0.0/24", "fd00:96::/112"]);

  // An object repeating a CIDR changes nothing; deleting it keeps the CIDR the other still has.
  await api.create(serviceCIDRs, object("again", ["10.96.0.0/16"]));
  await flushAsync();
  assert.equal(seen.length, 2);
  await api.delete(serviceCIDRs, "again");
  await api.delete(serviceCIDRs, "extra");
  await flushAsync();
  assert.deepEqual(seen.at(-1), ["10.96.0.0/16", "fd00:96::/112"]);
  assert.equal(seen.length, 3);
  abort.abort();
  await factory.stop();
});

test("an API server without ServiceCIDRs: one warning, no informer", async () => {
  const api = new FakeApi();
  api.failNext("list", 404);
  const factory = new InformerFactory({ client: api });
  const log = logger();
  const watch = await watchServiceCIDRs(api, factory, () => assert.fail("no change expected"), log.logger);
  assert.equal(watch, undefined);
  assert.equal(log.lines.length, 1);
  assert.match(log.lines[0] ?? "", /serves no networking\.k8s\.io\/v1 ServiceCIDRs/);
  assert.equal(factory.hasSynced(), true, "the factory holds no ServiceCIDR informer to wait for");
});

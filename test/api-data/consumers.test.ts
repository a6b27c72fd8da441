// The property test of issue #11: every informer consumer, fed generated objects whose optional lists and
// maps are absent, null, empty or full, must not throw, must sync, and must make of a null or empty field
// exactly what it makes of the field absent (as Go code does with a nil slice or map), except where
// upstream itself tells an empty value from a missing one (DIFFERENCES below).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CONSUMERS, type Consumer, type Observed } from "./consumers.js";
import {
  type Change,
  type Cluster,
  changeablePaths,
  clusterWith,
  describeChange,
  type KindName,
  prng,
  randomChanges,
} from "./generate.js";

/** Where an empty value means something else than no value, in upstream's code as in ours. */
interface Difference {
  consumer: string;
  /** "Kind[index] path", as describeChange writes it without the form. */
  field: string;
  why: string;
}

const DIFFERENCES: readonly Difference[] = [
  {
    consumer: "slice-controller",
    field: "Service[0] spec.selector",
    // Upstream's endpointslice controller returns early only for `Spec.Selector == nil` (the Service's
    // slices are left alone); a non-nil empty map becomes labels.Everything(). The real apiserver never sends
    // `selector: {}` (apiserver-shapes.test.ts: it comes back omitted), so only objects that reach the
    // controller some other way tell them apart. The test at the end checks that ours does what upstream does.
    why: "upstream tells a nil selector (skip the Service) from an empty one (select every Pod)",
  },
];

const differenceOf = (consumer: string, field: string) =>
  DIFFERENCES.find((d) => d.consumer === consumer && d.field === field);

// biome-ignore lint/suspicious/noUndeclaredEnvVars: a knob for replaying a run by hand; no turbo task reads it
const RANDOM_CLUSTERS = Number(process.env.API_DATA_RANDOM_CLUSTERS ?? 200);
// biome-ignore lint/suspicious/noUndeclaredEnvVars: a knob for replaying a run by hand; no turbo task reads it
const SEED = Number(process.env.API_DATA_SEED ?? Date.now() % 1_000_000);

/** Runs a consumer and checks what must hold for every input: no error logged, every informer synced. */
async function observe(consumer: Consumer, cluster: Cluster, label: string): Promise<unknown> {
  let observed: Observed;
  try {
    observed = await consumer.run(cluster);
  } catch (err) {
    assert.fail(`${consumer.name} threw on ${label}: ${(err as Error).stack}`);
  }
  assert.deepEqual(observed.errors, [], `${consumer.name} logged errors on ${label}`);
  assert.deepEqual(observed.notSynced, [], `${consumer.name} did not sync on ${label}`);
  return observed.output;
}

/** Every one-field variant of `kind`: null and empty must give what absent gives (or what DIFFERENCES say). */
async function checkOneFieldVariants(consumer: Consumer, kind: KindName): Promise<void> {
  for (const p of changeablePaths().filter((c) => c.kind === kind)) {
    const field = `${p.kind}[${p.index}] ${p.path}`;
    const output = async (form: Change["form"]) => {
      const change: Change = { ...p, form };
      return observe(consumer, clusterWith([change]), describeChange(change));
    };
    const absent = await output("absent");
    assert.deepEqual(await output("null"), absent, `${consumer.name}: ${field} null differs from absent`);
    const difference = differenceOf(consumer.name, field);
    const empty = await output("empty");
    if (difference) {
      assert.notDeepEqual(empty, absent, `${consumer.name}: ${field} empty no longer differs from absent`);
    } else {
      assert.deepEqual(empty, absent, `${consumer.name}: ${field} empty differs from absent`);
    }
  }
}

/** The same changes with every null and every (ordinary) empty made absent: what the consumer must match. */
function asAbsent(consumer: Consumer, changes: readonly Change[]): Change[] {
  return changes.map((c) => {
    if (c.form === "null") return { ...c, form: "absent" };
    const field = `${c.kind}[${c.index}] ${c.path}`;
    if (c.form === "empty" && !differenceOf(consumer.name, field)) return { ...c, form: "absent" };
    return c;
  });
}

const KINDS: readonly KindName[] = [
  "Service",
  "EndpointSlice",
  "Endpoints",
  "Pod",
  "Node",
  "Namespace",
  "ServiceCIDR",
  "Lease",
];

for (const consumer of CONSUMERS) {
  describe(`${consumer.name} on generated API objects`, () => {
    test("the full cluster is served, and its output depends on the generated fields", async () => {
      const full = await observe(consumer, clusterWith([]), "the full cluster");
      const bare = clusterWith(changeablePaths().map((p) => ({ ...p, form: "absent" as const })));
      // A consumer whose output ignored every generated field would pass everything below vacuously.
      assert.notDeepEqual(await observe(consumer, bare, "everything absent"), full);
    });

    for (const kind of KINDS) {
      test(`${kind}: each optional field null or empty acts as absent`, () =>
        checkOneFieldVariants(consumer, kind));
    }

    test(`${RANDOM_CLUSTERS} random clusters (seed ${SEED}) act as their nulls and empties absent`, async () => {
      const random = prng(SEED);
      for (let i = 0; i < RANDOM_CLUSTERS; i++) {
        const changes = randomChanges(random);
        const label = `random cluster ${i} of seed ${SEED} (rerun with API_DATA_SEED=${SEED})`;
        const got = await observe(consumer, clusterWith(changes), label);
        const want = await observe(
          consumer,
          clusterWith(asAbsent(consumer, changes)),
          `${label}, made absent`,
        );
        assert.deepEqual(got, want, `${consumer.name}: ${label} differs from its absent form`);
      }
    });
  });
}

// Upstream selects every Pod of the namespace for `selector: {}` (labels.Set{}.AsSelectorPreValidated() is
// Everything()), and so does apps/slice-controller/src/selector.ts: every Pod of the full cluster carries the
// full selector's labels, so the slices must come out the same.
test("slice controller: a Service with selector {} selects every Pod, as upstream", async () => {
  const consumer = CONSUMERS.find((c) => c.name === "slice-controller") as Consumer;
  const change: Change = { kind: "Service", index: 0, path: "spec.selector", form: "empty" };
  const empty = await observe(consumer, clusterWith([change]), describeChange(change));
  assert.deepEqual(empty, await observe(consumer, clusterWith([]), "the full cluster"));
});

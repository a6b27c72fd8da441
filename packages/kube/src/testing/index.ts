// Test doubles for code built on @switchyard/kube; import from "@switchyard/kube/testing".
export { FakeApi, type FakeApiOptions, type FakeVerb, mergePatch } from "./fake-api.js";
export { FakeClock, flushAsync } from "./fake-clock.js";
export { prng } from "./prng.js";
export { type MainIO, runMain } from "./run-main.js";
export { matchesFieldSelector, matchesLabelSelector } from "./selectors.js";
export { type EventuallyOptions, eventually, sleep } from "./wait.js";

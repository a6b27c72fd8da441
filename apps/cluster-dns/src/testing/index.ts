// Test helpers for switchyard-dns; import from "@switchyard/cluster-dns/testing": the program in a child process
// and plain queries (process.ts), ours beside CoreDNS's binary on one Corefile, answers compared
// (differential.ts: needs @switchyard/testbed, an optional peer the tests bring, to find CoreDNS), and the clients
// that misbehave on purpose (hostile-clients.ts), for these tests, the root's fault tests and the bench.
export * from "./differential.js";
export * from "./hostile-clients.js";
export * from "./process.js";

// Test helpers for switchyard-dns; import from "@switchyard/cluster-dns/testing": the program in a child process
// and plain queries (process.ts), and the clients that misbehave on purpose, for the fault tests and the bench
// (hostile-clients.ts).
export * from "./hostile-clients.js";
export * from "./process.js";

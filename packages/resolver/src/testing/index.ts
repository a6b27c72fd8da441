// Test helpers for DNS servers, ours or any other; import from "@switchyard/resolver/testing". The fuzzer's
// traffic (mutated packets over UDP and TCP, paced by valid sentinel queries) drives fuzz.test.ts and the bench's
// long run against switchyard-dns and CoreDNS.
export { type DriveOptions, type DriveResult, drive } from "./fuzz/drive.js";
export { mutant, seeds } from "./fuzz/mutate.js";

// The basics every Switchyard package shares, with no dependencies: addresses and CIDRs in both families, and
// Go's duration text.
export * from "./cidr.js";
export * from "./go-duration.js";
export * from "./ip.js";
export * from "./ip-math.js";
export * from "./ip-text.js";

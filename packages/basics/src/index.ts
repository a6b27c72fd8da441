// The basics every Switchyard package shares, with no dependencies: addresses and CIDRs in both families, Go's
// duration text, and the API types newer than the kubernetes-types the repository pins.
export * from "./api-types.js";
export * from "./cidr.js";
export * from "./go-duration.js";
export * from "./ip.js";
export * from "./ip-math.js";
export * from "./ip-text.js";
export * from "./quantity.js";

// The basics every Switchyard package shares, with no dependencies: addresses and CIDRs in both families.
export * from "./ip.js";

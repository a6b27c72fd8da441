// @switchyard/proxier: the pure core of a kube-proxy-compatible service proxy.

export * from "./model/endpoint.js";
export * from "./model/endpoints-change-tracker.js";
export * from "./model/service-change-tracker.js";
export * from "./model/service-port.js";
export * from "./model/service-port-name.js";
export * from "./model/topology.js";
export * from "./nftables/fake.js";
export * from "./nftables/names.js";
export * from "./nftables/objects.js";
export { masqueradeMark, type NFTablesOptions } from "./nftables/options.js";
export * from "./nftables/render.js";
export { BASE_CHAINS, JUMP_CHAINS } from "./nftables/skeleton.js";
export * from "./nftables/tracer.js";
export { Transaction } from "./nftables/transaction.js";
export type { IPFamily } from "./util/ip.js";

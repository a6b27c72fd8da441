// Test helpers for switchyard-proxy; import from "@switchyard/kube-proxy-app/testing": a one-node cluster network
// in namespaces with the proxy running in its node namespace (netns.ts), and the objects tests write through an
// API client (api.ts).
export * from "./api.js";
export * from "./netns.js";

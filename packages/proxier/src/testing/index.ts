// Test fixtures for code built on @switchyard/proxier; import from "@switchyard/proxier/testing". One address
// plan (fixtures.ts's header), Services, EndpointSlices and the maps the change trackers make of them, and the
// renderers' options for a node of that plan. The in-memory kernels and tracers are "@switchyard/proxier/trace".
export * from "./fixtures.js";

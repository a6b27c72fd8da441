// What other packages' benchmarks and tests use of the netns runtime (`@switchyard/lab/netns`): bring a lab up and
// down, its plan, and the exec its commands and scenarios run with.
export { type Exec, realExec } from "../exec.js";
export type { ProxyMode } from "../stack/manifests.js";
export { type LabDownResult, labDown } from "./lab-down.js";
export { type LabUpOptions, labUp } from "./lab-up.js";
export { defaultLabInput, type LabInput, type LabPlan, type NodePlan, planLab } from "./plan.js";
export type { LabState } from "./state.js";

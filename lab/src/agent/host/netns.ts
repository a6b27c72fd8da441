/**
 * Everything the node agent takes from the netns runtime, named in one place: the lab's plan (the node it plays,
 * the cluster's CIDRs and DNS address), the state folder `up` writes (lab.json, the journal, the pods' folder), the
 * steps that make the node's pod bridge and each pod's sandbox, applied with their undo journaled first, and the
 * teardown that takes them back. No other file of src/agent imports src/netns.
 */
export { applySteps } from "../../netns/executor.js";
export { Journal } from "../../netns/journal.js";
export { type LabPlan, type NodePlan, nodeByName } from "../../netns/plan.js";
export { type LabPaths, labPaths, readLabState } from "../../netns/state.js";
export { podBridgeSteps, podSandboxSteps } from "../../netns/steps.js";
export { realTeardownDeps, teardown } from "../../netns/teardown.js";

// What tests import (`@switchyard/testbed`): a real control plane per suite, a kube-apiserver client and object
// builders for it, upstream's slice controller and kube-proxy beside ours, the Docker engine of the image tests, and YAML files
// read back. Everything these modules export is meant for tests, so they are re-exported whole. Programs (the
// lab) use the subpaths instead: ./controlplane, ./upstream, ./progress and ./private-files.
export { freeControlPlanePorts } from "./controlplane/ports.js";
export * from "./helpers/api.js";
export * from "./helpers/cluster.js";
export * from "./helpers/docker.js";
export * from "./helpers/serviceaccount.js";
export * from "./helpers/upstream-kube-proxy.js";
export * from "./helpers/upstream-slice-controller.js";
export * from "./helpers/yaml.js";
export {
  missingControlPlane,
  startControlPlane,
  type TestControlPlane,
  type TestControlPlaneOptions,
} from "./test-control-plane.js";
export { resolveBinary } from "./upstream/binaries.js";

// What other packages' tests use of the node agent (`@switchyard/lab/agent`): the Node and pod status it writes and
// the files it gives a pod, as pure functions of the API's objects.
export { nodeStatus } from "./node-object.js";
export { containerEnv, resolvConf } from "./pod-files.js";
export { podStatus } from "./pod-status.js";

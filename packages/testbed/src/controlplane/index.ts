// The control plane as `switchyard-lab controlplane` and the lab clusters run it (`@switchyard/testbed/controlplane`):
// bring-up and teardown of a state folder, its options and ports, the processes it records, its certificates,
// and the admin client of its kube-apiserver.
export { apiserverUrl, etcdClientUrl, type StatePaths, statePaths } from "./args.js";
export { adminCredentials, labClient } from "./client.js";
export {
  type ComponentName,
  type ComponentStatus,
  type ControlPlaneState,
  type DownResult,
  down,
  readState,
  status,
  type UpOptions,
  up,
  writeState,
} from "./controlplane.js";
export { type ClientTls, probe } from "./health.js";
export {
  type ControlPlaneInput,
  type ControlPlaneOptions,
  type ControlPlanePorts,
  defaultPorts,
  defaultStateDir,
  firstServiceIp,
  withDefaults,
} from "./options.js";
export { ensureKubeletServingCert, type Pki, pkiPaths } from "./pki.js";
export { checkPortFree, freeControlPlanePorts, freePort } from "./ports.js";
export { isOurs, lastLines, type ProcessRecord, startDetached, stopProcess } from "./processes.js";

export { main } from "./cli/main.js";
export { type ControlPlaneState, down, readState, status, up } from "./controlplane/controlplane.js";
export { type ControlPlaneOptions, defaultStateDir } from "./controlplane/options.js";
export {
  type BinarySpec,
  binarySpecs,
  cacheBinDir,
  envVarFor,
  missingBinariesMessage,
  resolveAll,
  resolveBinary,
  type UpstreamBinary,
} from "./upstream/binaries.js";
export { buildUpstream, kubernetesLdflags } from "./upstream/build.js";
export { readVersions, type UpstreamVersions } from "./upstream/versions.js";

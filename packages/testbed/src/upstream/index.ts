// The upstream binaries (`@switchyard/testbed/upstream`): the releases pinned in upstream/versions.json, where each
// binary is found, and building the missing ones from the Go modules under upstream/ into the cache.
export {
  type BinarySpec,
  binarySpecs,
  cacheBinDir,
  type Env,
  envVarFor,
  missingBinariesMessage,
  onDemandSpecs,
  type ResolvedBinary,
  resolveAll,
  resolveBinary,
  type UpstreamBinary,
} from "./binaries.js";
export {
  type BuildOptions,
  type BuildResult,
  buildUpstream,
  goAvailable,
  kubernetesLdflags,
} from "./build.js";
export { majorMinor, readVersions, type UpstreamVersions, upstreamDir } from "./versions.js";

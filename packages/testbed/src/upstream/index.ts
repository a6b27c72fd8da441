// The upstream binaries (`@switchyard/testbed/upstream`): the releases pinned in upstream/versions.json, where each
// binary is found, and getting the missing ones into the cache: the official releases first, else a build from the
// Go modules under upstream/.
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
export {
  type DownloadDeps,
  type DownloadOutcome,
  downloadReleases,
  httpNet,
  type NetOptions,
  type ReleaseNet,
  tarExtract,
  UnreachableError,
} from "./download.js";
export {
  layOutMirror,
  type MirrorLayout,
  type MirrorOptions,
  mirrorEnv,
  type ServedMirror,
  serveMirror,
  sha256File,
} from "./mirror.js";
export {
  type BinaryOrigin,
  downloadsWanted,
  formatOrigin,
  goPlatform,
  MIRROR_VARS,
  type Platform,
  parseChecksum,
  parseOrigin,
  RELEASES_SWITCH,
  type ReleaseAsset,
  type ReleaseOrigin,
  releaseAsset,
} from "./releases.js";
export { majorMinor, readVersions, type UpstreamVersions, upstreamDir } from "./versions.js";

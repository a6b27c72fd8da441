/** A real etcd + kube-apiserver from @switchyard/testbed, under the names the resolver's suites use. */
import { missingControlPlane } from "@switchyard/testbed";

export { startControlPlane, type TestControlPlane as ControlPlane } from "@switchyard/testbed";

/** Why control-plane suites cannot run here (the upstream binaries are missing), or undefined. */
export const controlPlaneSkip: string | undefined = missingControlPlane();

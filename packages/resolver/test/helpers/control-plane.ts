/**
 * A real etcd + kube-apiserver from @switchyard/lab/testing, typed locally so the resolver does not depend
 * on the lab. Suites skip, saying why, when the lab is not built or its binaries are missing.
 */
export interface ControlPlane {
  kubeconfigPath: string;
  server: string;
  stateDir: string;
  killApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  stop(): Promise<void>;
}

interface LabTesting {
  missingControlPlane(): string | undefined;
  startControlPlane(): Promise<ControlPlane>;
}

const labSpecifier = "@switchyard/lab/testing";
const lab = (await import(labSpecifier).catch(() => undefined)) as LabTesting | undefined;

/** Why control-plane suites cannot run here, or undefined. */
export const controlPlaneSkip: string | undefined = lab
  ? lab.missingControlPlane()
  : "@switchyard/lab is not built (npm run build -w @switchyard/lab)";

export function startControlPlane(): Promise<ControlPlane> {
  if (!lab) throw new Error("@switchyard/lab is not built");
  return lab.startControlPlane();
}

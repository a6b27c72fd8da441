/**
 * A real etcd + kube-apiserver from @switchyard/lab/testing, typed locally so the resolver does not depend
 * on the lab. Suites skip, saying why, when the lab is not installed or not built, or its binaries are missing;
 * any other import error (a built lab that fails to load) throws, so it fails the run instead of hiding as a skip.
 */
import { fileURLToPath } from "node:url";

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

/** The lab's testing module, or why it is absent. Only a missing package or entry file counts as absent. */
async function importLab(): Promise<LabTesting | string> {
  let entry: string;
  try {
    // Resolving does not read the file: it fails only when the package itself is not installed.
    entry = import.meta.resolve(labSpecifier);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND")
      return "@switchyard/lab is not installed (npm ci)";
    throw err;
  }
  try {
    return (await import(labSpecifier)) as LabTesting;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { url?: string };
    // Not built: the entry file itself is what is missing. A module it imports that is missing, a syntax
    // error or a throw at load is a broken lab, not an absent one.
    const entryMissing =
      e.code === "ERR_MODULE_NOT_FOUND" &&
      (e.url === entry || e.message.includes(`'${fileURLToPath(entry)}'`));
    if (entryMissing) return "@switchyard/lab is not built (npm run build -w @switchyard/lab)";
    throw err;
  }
}

const lab = await importLab();

/** Why control-plane suites cannot run here, or undefined. */
export const controlPlaneSkip: string | undefined = typeof lab === "string" ? lab : lab.missingControlPlane();

export function startControlPlane(): Promise<ControlPlane> {
  if (typeof lab === "string") throw new Error(lab);
  return lab.startControlPlane();
}

import { envVarFor } from "@switchyard/testbed/upstream";

/** The programs the kind runtime drives, as paths. The kind CLI is not one of them (provision.ts does its work). */
export interface KindTools {
  docker: string;
  kubectl: string;
}

/** Where each tool was looked for; undefined when not found. */
export type ToolLookup = (name: keyof KindTools) => string | undefined;

const howToGet: Record<keyof KindTools, (cacheDir: string) => string> = {
  docker: () => "docker is not on PATH: the kind runtime needs the Docker CLI and a running Docker engine",
  kubectl: (cacheDir) =>
    `kubectl is missing: npx switchyard-lab upstream build --only kubectl (into ${cacheDir}), or put one on PATH, or set ${envVarFor("kubectl")}=<path>`,
};

/** The tools, or one error naming every missing one and how to get it. */
export function findKindTools(lookup: ToolLookup, cacheDir: string): KindTools {
  const names = ["docker", "kubectl"] as const;
  const found = names.map((n) => [n, lookup(n)] as const);
  const missing = found.filter(([, path]) => !path).map(([n]) => howToGet[n](cacheDir));
  if (missing.length > 0) throw new Error(`the kind runtime cannot start: ${missing.join("; ")}`);
  return Object.fromEntries(found) as unknown as KindTools;
}

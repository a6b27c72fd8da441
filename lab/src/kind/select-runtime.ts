import type { LabRuntime } from "../netns/state.js";

export type { LabRuntime };
/** The runtimes `switchyard-lab up` can bring a lab up with. */
export const labRuntimes: readonly LabRuntime[] = ["netns", "kind"];
export const isLabRuntime = (s: string): s is LabRuntime => (labRuntimes as readonly string[]).includes(s);

/** A probe's answer: it worked, or why not (one line). */
export type Probe = { ok: true } | { ok: false; why: string };

/** What the default runtime is chosen from; the probes run only when they can matter. */
export interface RuntimeFacts {
  platform: string;
  /** undefined where there are no uids (Windows). */
  uid: number | undefined;
  /** `ip netns list` as root. */
  netns: () => Promise<Probe>;
  /** `docker info`: a CLI and a running engine it can reach. */
  docker: () => Promise<Probe>;
}

/**
 * The default runtime: netns where it runs (Linux, root, `ip netns` works), since it needs nothing but the
 * kernel; otherwise kind where a Docker engine answers; otherwise one line saying what each one lacks.
 */
export async function selectRuntime(f: RuntimeFacts): Promise<{ runtime: LabRuntime } | { error: string }> {
  let netnsWhy: string;
  if (f.platform !== "linux") netnsWhy = `it needs Linux (this is ${f.platform})`;
  else if (f.uid !== 0) netnsWhy = `it needs root (running as uid ${f.uid ?? "?"}; try sudo)`;
  else {
    const probe = await f.netns();
    if (probe.ok) return { runtime: "netns" };
    netnsWhy = `\`ip netns\` does not work here (${probe.why})`;
  }
  const docker = await f.docker();
  if (docker.ok) return { runtime: "kind" };
  return {
    error: `no lab runtime works here: netns: ${netnsWhy}; kind: it needs a running Docker engine (docker info: ${docker.why})`,
  };
}

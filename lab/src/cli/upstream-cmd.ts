import {
  binarySpecs,
  buildUpstream,
  cacheBinDir,
  onDemandSpecs,
  readVersions,
  resolveAll,
  type UpstreamBinary,
} from "@switchyard/testbed/upstream";
import type { Command } from "./command.js";
import { UsageError } from "./usage.js";

const known = [...binarySpecs, ...onDemandSpecs].map((s) => s.name);

const buildCmd: Command = {
  name: "build",
  summary: "build the missing upstream binaries from source (Go) into the cache",
  description:
    "Builds the upstream binaries that are missing from packages/testbed/upstream's pinned Go modules into " +
    `${cacheBinDir()}, with progress; a second run finds them and returns in seconds. A cold build takes ` +
    "about ten minutes on two cores and about 2.5 GB of Go module cache.",
  flags: [
    { name: "force", help: "build even the binaries already there" },
    {
      name: "only",
      value: "NAMES",
      default: `${binarySpecs.map((s) => s.name).join(",")}`,
      help: `a comma-separated list of binaries; also takes the on-demand ones: ${onDemandSpecs.map((s) => s.name).join(", ")}`,
    },
  ],
  examples: ["switchyard-lab upstream build", "switchyard-lab upstream build --only kubectl,kube-proxy"],
  async run(inv) {
    const only = inv
      .string("only")
      ?.split(",")
      .map((s) => s.trim()) as UpstreamBinary[] | undefined;
    const unknown = only?.filter((name) => !known.includes(name));
    if (unknown?.length)
      throw new UsageError(
        `upstream build: --only: unknown binary ${unknown.join(", ")} (known: ${known.join(", ")})`,
      );
    const result = await buildUpstream({ force: inv.bool("force"), ...(only ? { only } : {}) });
    if (result.built.length > 0)
      console.log(`built ${result.built.join(", ")} into ${result.binDir} in ${result.seconds.toFixed(1)}s`);
    else console.log(`all present (${result.skipped.join(", ")}); nothing to build`);
    return 0;
  },
};

const whereCmd: Command = {
  name: "where",
  summary: "where each binary is found: its variable, SWITCHYARD_UPSTREAM_BIN, the cache, or PATH",
  description:
    "Prints each upstream binary, how it was found (env: its own variable such as SWITCHYARD_KUBECTL; " +
    "bin-dir: SWITCHYARD_UPSTREAM_BIN; cache: built here; path: PATH) and its path. Exits 1 when one is missing.",
  examples: ["switchyard-lab upstream where"],
  async run() {
    let missing = 0;
    for (const b of resolveAll()) {
      if (!b.path) missing++;
      console.log(`${b.name.padEnd(24)} ${b.source.padEnd(8)} ${b.path ?? "-"}`);
    }
    return missing === 0 ? 0 : 1;
  },
};

const versionsCmd: Command = {
  name: "versions",
  summary: "the pinned upstream releases (packages/testbed/upstream/versions.json), as JSON",
  examples: ["switchyard-lab upstream versions"],
  async run() {
    console.log(JSON.stringify(readVersions(), null, 2));
    return 0;
  },
};

export const upstreamCommand: Command = {
  name: "upstream",
  group: "Control plane and binaries",
  summary: "the upstream binaries the lab runs (kube-apiserver, etcd, kubectl ...), built from source",
  description:
    "The upstream programs the lab runs and Switchyard is compared with, built from source at the releases " +
    "pinned in packages/testbed/upstream/versions.json.",
  subcommands: [buildCmd, whereCmd, versionsCmd],
  examples: ["switchyard-lab upstream where", "switchyard-lab upstream build"],
};

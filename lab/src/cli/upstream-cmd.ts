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
import { mirrorCmd } from "./upstream-mirror-cmd.js";
import { UsageError } from "./usage.js";

const known = [...binarySpecs, ...onDemandSpecs].map((s) => s.name);

const buildCmd: Command = {
  name: "build",
  summary:
    "get the missing upstream binaries into the cache: official releases first, else built from source",
  description:
    "Gets the upstream binaries that are missing into " +
    `${cacheBinDir()}: first the official release binaries for this OS and CPU at the pinned versions, each ` +
    "checked against its published SHA-256 (mirrors: SWITCHYARD_K8S_RELEASES, SWITCHYARD_ETCD_RELEASES, " +
    "SWITCHYARD_COREDNS_RELEASES; SWITCHYARD_RELEASES=off skips downloads); what no release gave is built from " +
    "packages/testbed/upstream's pinned Go modules, with progress. Binaries already in the cache are used as they " +
    "are, with no download. A cold source build takes 15-21 minutes on two cores and fills Go's caches.",
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
    const took = `${result.seconds.toFixed(1)}s`;
    if (result.downloaded.length > 0)
      console.log(
        `downloaded ${result.downloaded.join(", ")} (release binaries, SHA-256 checked) into ${result.binDir}`,
      );
    if (result.built.length > 0)
      console.log(`built ${result.built.join(", ")} from source into ${result.binDir}`);
    if (result.downloaded.length + result.built.length > 0) console.log(`done in ${took}`);
    else console.log(`all present (${result.skipped.join(", ")}); nothing to get`);
    return 0;
  },
};

const whereCmd: Command = {
  name: "where",
  summary: "where each binary is found: its variable, SWITCHYARD_UPSTREAM_BIN, the cache, or PATH",
  description:
    "Prints each upstream binary, how it was found (env: its own variable such as SWITCHYARD_KUBECTL; " +
    "bin-dir: SWITCHYARD_UPSTREAM_BIN; cache: `upstream build`'s; path: PATH), its path, and for a cached one " +
    "where it came from (a release download and its URL, or a source build). Exits 1 when one is missing.",
  examples: ["switchyard-lab upstream where"],
  async run() {
    let missing = 0;
    for (const b of resolveAll()) {
      if (!b.path) missing++;
      const origin =
        b.origin?.kind === "release"
          ? `  (release ${b.origin.url})`
          : b.origin
            ? "  (source build)"
            : b.source === "cache"
              ? "  (origin not recorded: cached before origins were)"
              : "";
      console.log(`${b.name.padEnd(24)} ${b.source.padEnd(8)} ${b.path ?? "-"}${origin}`);
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
  summary:
    "the upstream binaries the lab runs (kube-apiserver, etcd, kubectl ...): releases or built from source",
  description:
    "The upstream programs the lab runs and Switchyard is compared with, at the releases pinned in " +
    "packages/testbed/upstream/versions.json: the official release binaries where they can be downloaded, " +
    "else built from source.",
  subcommands: [buildCmd, whereCmd, versionsCmd, mirrorCmd],
  examples: ["switchyard-lab upstream where", "switchyard-lab upstream build"],
};

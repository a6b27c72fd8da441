import {
  binarySpecs,
  cacheBinDir,
  onDemandSpecs,
  resolveAll,
  type UpstreamBinary,
} from "../upstream/binaries.js";
import { buildUpstream } from "../upstream/build.js";
import { readVersions } from "../upstream/versions.js";
import { parseFlags, UsageError } from "./usage.js";

const help = `switchyard-lab upstream build|where|versions

  build [--force] [--only a,b]   build missing binaries from lab/upstream into ${cacheBinDir()}
                                 (--only also takes the on-demand ones: ${onDemandSpecs.map((s) => s.name).join(", ")})
  where                          where each binary is found (env, SWITCHYARD_UPSTREAM_BIN, cache, PATH)
  versions                       the pinned releases (lab/upstream/versions.json)`;

export async function upstreamCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const cmd = `upstream ${sub ?? ""}`.trim();
  if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(help);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "build") {
    const { values } = parseFlags(cmd, rest, { force: { type: "boolean" }, only: { type: "string" } });
    const only = values.only?.split(",").map((s) => s.trim()) as UpstreamBinary[] | undefined;
    const known = [...binarySpecs, ...onDemandSpecs];
    const unknown = only?.filter((name) => !known.some((s) => s.name === name));
    if (unknown?.length) throw new UsageError(`${cmd}: --only: unknown binary ${unknown.join(", ")}`);
    const result = await buildUpstream({ force: values.force ?? false, ...(only ? { only } : {}) });
    if (result.built.length > 0)
      console.log(`built ${result.built.join(", ")} into ${result.binDir} in ${result.seconds.toFixed(1)}s`);
    else console.log(`all present (${result.skipped.join(", ")}); nothing to build`);
    return 0;
  }
  if (sub === "where") {
    parseFlags(cmd, rest, {});
    let missing = 0;
    for (const b of resolveAll()) {
      if (!b.path) missing++;
      console.log(`${b.name.padEnd(24)} ${b.source.padEnd(8)} ${b.path ?? "-"}`);
    }
    return missing === 0 ? 0 : 1;
  }
  if (sub === "versions") {
    parseFlags(cmd, rest, {});
    console.log(JSON.stringify(readVersions(), null, 2));
    return 0;
  }
  throw new UsageError(`unknown subcommand "upstream ${sub}"; expected build, where or versions`);
}

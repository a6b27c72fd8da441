// `switchyard-lab upstream mirror`: this machine's cached upstream binaries served as their official releases
// publish them, so that other machines (a workshop room's) get them with `upstream build` and the three mirror
// variables instead of the internet or a source build.
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import {
  binarySpecs,
  cacheBinDir,
  goPlatform,
  layOutMirror,
  mirrorEnv,
  onDemandSpecs,
  readVersions,
  releaseAsset,
  resolveBinary,
  serveMirror,
} from "@switchyard/testbed/upstream";
import type { Command, Invocation } from "./command.js";
import { portFlag } from "./usage.js";

const defaultPort = 8000;

/** The address other machines reach a server bound to every interface at: the first external IPv4, if any. */
function reachableHost(address: string): string {
  if (address !== "0.0.0.0" && address !== "::") return address.includes(":") ? `[${address}]` : address;
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === "IPv4" && !i.internal);
  return external?.address ?? "127.0.0.1";
}

async function runMirror(inv: Invocation): Promise<number> {
  const platform = goPlatform(process.platform, process.arch);
  if (!platform) throw new Error(`no release is published for ${process.platform}/${process.arch}`);
  const versions = readVersions();
  // Only pinned binaries: the cache's, or ones the variables name; one found on PATH may be any version.
  const found = [...binarySpecs, ...onDemandSpecs]
    .filter((s) => releaseAsset(s.name, versions, platform, {}))
    .map((s) => resolveBinary(s.name))
    .filter((b) => b.path && b.source !== "path");
  const left = binarySpecs.map((s) => s.name).filter((name) => !found.some((b) => b.name === name));
  if (found.length === 0)
    throw new Error("no upstream binaries to mirror: run switchyard-lab upstream build first");
  const dir = inv.string("dir") ?? join(dirname(cacheBinDir()), "mirror");
  const layout = await layOutMirror(Object.fromEntries(found.map((b) => [b.name, b.path as string])), dir);
  console.log(`mirrored ${layout.names.join(", ")} into ${dir}`);
  if (left.length > 0) console.log(`not mirrored (not in the cache here): ${left.join(", ")}`);
  const address = inv.string("address") ?? "127.0.0.1";
  const port = portFlag("upstream mirror", "port", inv.string("port"), 0) ?? defaultPort;
  const mirror = await serveMirror(dir, { host: address, port });
  const base = `http://${reachableHost(address)}:${new URL(mirror.url).port}`;
  console.log(`serving ${dir} at ${base} (Ctrl-C stops it); on each machine:`);
  for (const [variable, url] of Object.entries(mirrorEnv(base))) console.log(`  export ${variable}=${url}`);
  console.log("  npx switchyard-lab upstream build");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await mirror.close();
  return 0;
}

export const mirrorCmd: Command = {
  name: "mirror",
  summary: "serve this machine's upstream binaries to others as their releases publish them",
  description:
    "Lays out the upstream binaries this machine has (the cache's, or the ones SWITCHYARD_UPSTREAM_BIN and the " +
    "per-binary variables name) under --dir exactly as their official releases publish them: Kubernetes' " +
    "binaries one by one with a .sha256 each (hard links where the filesystem allows), etcd's tarball with its " +
    "SHA256SUMS, CoreDNS's tarball with its .sha256. Then serves that folder over HTTP until Ctrl-C, and prints " +
    "the three mirror variables that point `upstream build` at it. For a room without internet, or a slow one: " +
    "one machine builds or downloads the binaries once, the others download them from it.",
  flags: [
    {
      name: "dir",
      value: "DIR",
      default: join(dirname(cacheBinDir()), "mirror"),
      help: "where the mirror's files are laid out",
    },
    {
      name: "address",
      value: "ADDR",
      default: "127.0.0.1",
      help: "the address to listen on; 0.0.0.0 for the other machines of a room",
    },
    { name: "port", value: "PORT", default: String(defaultPort), help: "the port; 0 picks a free one" },
  ],
  examples: [
    "switchyard-lab upstream mirror",
    "switchyard-lab upstream mirror --address 0.0.0.0 --port 8000",
  ],
  run: runMirror,
};

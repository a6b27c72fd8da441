import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readVersions } from "@switchyard/testbed/upstream";
import { repoRoot } from "../self.js";
import type { Command } from "./command.js";

/** The lab package's own version (lab/package.json), from src or dist alike. */
function labVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "?";
}

/** The checkout's commit, when this runs from a git checkout (a number in the docs names the commit it came from). */
function commit(): string | undefined {
  try {
    return execFileSync("git", ["-C", repoRoot, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5000,
    }).trim();
  } catch {
    return undefined;
  }
}

/** The lines of `switchyard-lab version`: the lab, every pinned upstream release, and the Node running it. */
export function versionLines(): string[] {
  const sha = commit();
  const pinned = Object.entries(readVersions()).map(([name, v]) => [name, String(v)] as const);
  const rows = [...pinned, ["node", `${process.version} (${process.platform}/${process.arch})`] as const];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return [
    `switchyard-lab ${labVersion()}${sha ? ` (commit ${sha})` : ""}`,
    ...rows.map(([name, v]) => `${name.padEnd(width)}${v}`),
  ];
}

export const versionCommand: Command = {
  name: "version",
  group: "Other",
  summary: "the lab's version, the pinned upstream releases and the Node running it",
  description:
    "Prints the lab's version (and the commit of the checkout it runs from), the upstream releases pinned " +
    "in packages/testbed/upstream/versions.json (the binaries built from source and the kind node image " +
    "are these), and the version of Node running the lab. `switchyard-lab --version` prints the same.",
  examples: ["switchyard-lab version", "switchyard-lab --version"],
  async run() {
    console.log(versionLines().join("\n"));
    return 0;
  },
};

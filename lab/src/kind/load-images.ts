import { spawn } from "node:child_process";
import { appendFileSync, closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `kind load docker-image`, without kind and as kind does it: one `docker save` of the images into a temporary
 * archive, then the archive streamed into every node's containerd at once (`ctr images import` in the k8s.io
 * namespace, where kubelet looks), each with the node's own snapshotter (kindest/node and ours use overlayfs).
 * Nothing is pulled.
 */
export async function loadImagesIntoNodes(
  docker: string,
  images: readonly string[],
  nodes: readonly string[],
  log: string,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-images-"));
  const archive = join(dir, "images.tar");
  try {
    await run(docker, ["save", "-o", archive, ...images], log, "docker save");
    await Promise.all(
      nodes.map(async (node) => {
        const found = await run(docker, ["exec", node, "sh", "-c", snapshotterOf], log, node).catch(() => "");
        const args = ["exec", "-i", node, ...importArgs(found.trim() || "overlayfs")];
        await run(docker, args, log, `ctr images import on ${node}`, archive);
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const snapshotterOf = `containerd config dump 2>/dev/null | sed -n 's/^ *snapshotter = "\\(.*\\)"/\\1/p' | head -1`;

export const importArgs = (snapshotter: string) => [
  ...["ctr", "--namespace=k8s.io", "images", "import", "--all-platforms", "--digests"],
  ...[`--snapshotter=${snapshotter}`, "-"],
];

/** Runs a docker command (stdin from `input`, a file, when given); its stdout, or "<what>: <last stderr line>". */
function run(docker: string, args: string[], log: string, what: string, input?: string): Promise<string> {
  appendFileSync(log, `\n$ ${docker} ${args.join(" ")}${input ? ` < ${input}` : ""}\n`);
  return new Promise((resolve, reject) => {
    // The archive is the child's stdin itself (its own file descriptor), as Go's exec does for kind: nothing
    // is copied through this process, which may be busy with other work.
    const stdin = input ? openSync(input, "r") : "ignore";
    const child = spawn(docker, args, { stdio: [stdin, "pipe", "pipe"] });
    if (typeof stdin === "number") closeSync(stdin);
    let out = "";
    let last = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      appendFileSync(log, d);
      last = d.toString().trim().split("\n").pop() ?? last;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      appendFileSync(log, out);
      if (code === 0) resolve(out);
      else reject(new Error(`${what}: ${last || `exit ${code}`}`));
    });
  });
}

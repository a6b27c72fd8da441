import type { Exec } from "../exec.js";

/** One node's containerd, as CRI sees it: each reference it holds, with the IDs and digests that image answers to. */
export interface NodeImages {
  node: string;
  /** Full references (`docker.io/switchyard/echo:0.1.0`) → the image's ID and its manifest digests. */
  refs: Record<string, string[]>;
}

/** What still has to happen for every node to hold the images: builds first, then loads. */
export interface ImageLoads {
  /** Images no node may skip and the engine does not have: built before anything is loaded. */
  build: string[];
  /** One load per set of images; nodes that lack the same images share one. */
  loads: { images: string[]; nodes: string[] }[];
}

/**
 * A reference as containerd names it: Docker Hub's domain and `library/` where the short form leaves them out, and
 * `:latest` where it has no tag ("switchyard/echo:0.1.0" → "docker.io/switchyard/echo:0.1.0").
 */
export function fullReference(ref: string): string {
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  const hasDomain = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  const named = hasDomain ? ref : `docker.io/${slash < 0 ? "library/" : ""}${ref}`;
  const path = named.slice(named.lastIndexOf("/") + 1);
  return path.includes(":") || path.includes("@") ? named : `${named}:latest`;
}

/** `crictl images -o json` → the node's references with their IDs and digests. */
export function parseNodeImages(node: string, crictlJson: string): NodeImages {
  const parsed = JSON.parse(crictlJson) as {
    images?: { id?: string; repoTags?: string[]; repoDigests?: string[] }[];
  };
  const refs: Record<string, string[]> = {};
  for (const img of parsed.images ?? []) {
    const ids = [img.id ?? "", ...(img.repoDigests ?? []).map((d) => d.slice(d.indexOf("@") + 1))];
    for (const tag of img.repoTags ?? []) refs[fullReference(tag)] = ids.filter(Boolean);
  }
  return { node, refs };
}

/**
 * Which (image, node) pairs need loading, and which images building first. A node needs an image it does not hold
 * under that reference, or holds as another image than the engine's (the engine's was rebuilt since: the node's
 * is stale). Where the engine has no such image, what every node holds is kept as it is; where a node lacks it,
 * it is built.
 */
export function imagesToLoad(
  wanted: readonly string[],
  engine: Readonly<Record<string, string | undefined>>,
  held: readonly NodeImages[],
): ImageLoads {
  const lacks = (node: NodeImages, image: string) => {
    const ids = node.refs[fullReference(image)];
    const id = engine[image];
    return !ids || (id !== undefined && !ids.includes(id));
  };
  const byImages = new Map<string, { images: string[]; nodes: string[] }>();
  for (const node of held) {
    const images = wanted.filter((image) => lacks(node, image));
    if (images.length === 0) continue;
    const key = images.join(" ");
    const load = byImages.get(key) ?? { images, nodes: [] };
    load.nodes.push(node.node);
    byImages.set(key, load);
  }
  const loads = [...byImages.values()];
  const build = wanted.filter(
    (image) => engine[image] === undefined && loads.some((l) => l.images.includes(image)),
  );
  return { build, loads };
}

export interface LoadLackingDeps {
  exec: Exec;
  docker: string;
  /** Builds these images into the engine. */
  build: (images: readonly string[]) => Promise<unknown>;
  /** Loads these images from the engine into these nodes (load-images.ts). */
  load: (images: readonly string[], nodes: readonly string[]) => Promise<void>;
}

/**
 * Gets the images into every node, building and loading only what a node lacks (imagesToLoad). Each node is
 * asked what it holds (crictl, in every kind node image); a node that cannot answer gets everything. Returns
 * what it did, in one line.
 */
export async function loadImagesNodesLack(
  d: LoadLackingDeps,
  images: readonly string[],
  nodes: readonly string[],
): Promise<string> {
  const held = await Promise.all(
    nodes.map((node) =>
      d
        .exec([d.docker, "exec", node, "crictl", "images", "-o", "json"])
        .then((out) => parseNodeImages(node, out))
        .catch(() => ({ node, refs: {} })),
    ),
  );
  let plan = imagesToLoad(images, await engineImageIds(d, images), held);
  const built = plan.build.length > 0 ? `built ${plan.build.join(", ")}; ` : "";
  if (plan.build.length > 0) {
    await d.build(plan.build);
    plan = imagesToLoad(images, await engineImageIds(d, images), held);
  }
  await Promise.all(plan.loads.map((l) => d.load(l.images, l.nodes)));
  if (plan.loads.length === 0) return `${images.join(", ")}: on every node already`;
  return `${built}loaded ${plan.loads.map((l) => `${l.images.join(", ")} into ${l.nodes.join(", ")}`).join("; ")}`;
}

/** Each image's ID on the engine, or undefined where the engine has none. */
async function engineImageIds(
  d: LoadLackingDeps,
  images: readonly string[],
): Promise<Record<string, string | undefined>> {
  const ids = await Promise.all(
    images.map((image) =>
      d
        .exec([d.docker, "image", "inspect", "--format", "{{.Id}}", image])
        .then((out) => out.trim() || undefined)
        .catch(() => undefined),
    ),
  );
  return Object.fromEntries(images.map((image, i) => [image, ids[i]]));
}

import { echoImage, loadgenImage } from "../agent/images.js";
import type { KubeObject } from "../stack/manifests.js";

/** One of Switchyard's images: built from its app's Dockerfile, then loaded into every kind node. */
export interface AppImage {
  /** The folder under apps/. */
  app: string;
  /** The reference exactly as the manifests write it, so the kubelet finds the loaded image without a pull. */
  image: string;
  /** Relative to the repository root, which is the build context every Dockerfile expects. */
  dockerfile: string;
}

/**
 * The lab's own workload images (lab/Dockerfile, `scripts/images.mjs echo loadgen`), loaded with the stack: they are
 * in no registry, and a Deployment of them must run right after `up` as on netns. Tagged, not :latest, so the
 * kubelet takes the loaded image (IfNotPresent) instead of trying a pull.
 */
export const labWorkloads = [
  { app: "echo", image: echoImage },
  { app: "loadgen", image: loadgenImage },
] as const;

interface PodTemplateHolder {
  spec?: {
    template?: { spec?: { containers?: { image?: string }[]; initContainers?: { image?: string }[] } };
  };
}

/** `switchyard/<app>[:tag]` → `<app>`; other images (none in the stack today) are pulled by the nodes. */
const ourImage = /^switchyard\/([a-z0-9-]+)(?::[\w.-]+)?$/;

/**
 * The images the manifests' workloads run that come from this repository, each once, in manifest order.
 * `hasDockerfile` is asked about apps/<app>/Dockerfile; an image without one is an error naming the manifest.
 */
export function imagePlan(
  objects: readonly KubeObject[],
  hasDockerfile: (path: string) => boolean,
): AppImage[] {
  const out: AppImage[] = [];
  for (const obj of objects) {
    const pod = (obj as PodTemplateHolder).spec?.template?.spec;
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      const app = c.image ? ourImage.exec(c.image)?.[1] : undefined;
      if (!c.image || !app || out.some((i) => i.image === c.image)) continue;
      const dockerfile = `apps/${app}/Dockerfile`;
      if (!hasDockerfile(dockerfile))
        throw new Error(
          `${obj.kind}/${obj.metadata.name} runs ${c.image}, but there is no ${dockerfile} to build it from`,
        );
      out.push({ app, image: c.image, dockerfile });
    }
  }
  return out;
}

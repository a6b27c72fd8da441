import type { UpstreamBinary } from "@switchyard/testbed/upstream";
import type { Busybox } from "./busybox.js";

/** One file an image adds on top of the host's: a symbolic link, an empty folder, or a copy of a host file. */
export type LayerEntry =
  | { path: string; link: string }
  | { path: string; dir: true }
  | { path: string; copy: string };

/** The files an image lays over the host's root in its containers (image-layer.ts makes them a folder). */
export interface ImageLayer {
  name: string;
  entries: LayerEntry[];
}

/** A known image: its files, and its ENTRYPOINT and CMD as its Dockerfile gives them. */
export interface ImageSpec {
  layer: ImageLayer;
  entrypoint?: string[];
  cmd?: string[];
}

/** What the catalog reads from this machine; each is undefined when the lab cannot provide it. */
export interface CatalogContext {
  /** The pinned release's binary of that name (resolveBinary); undefined: missing. */
  upstream?: (name: UpstreamBinary) => string | undefined;
  /** The host's static busybox (hostBusybox). */
  busybox?: () => Busybox | undefined;
  /** Where a program is on the host's PATH (nginx, dig). */
  hostProgram?: (name: string) => string | undefined;
  /** The TLS pair agnhost's porter serves (made once per lab, localhost-pair.ts). */
  porterPair?: { cert: string; key: string };
}

/** An image the lab knows but cannot run on this machine, and why. */
export interface MissingImage {
  missing: string;
}

const e2e = (name: string) => `registry.k8s.io/e2e-test-images/${name}`;

/** The busybox image under the names pods give it: Docker Hub's (short or long) and the e2e suite's copy. */
const busyboxNames = [
  "busybox",
  "library/busybox",
  "docker.io/busybox",
  "docker.io/library/busybox",
  e2e("busybox"),
];
/** The e2e suite's DNS-utilities image, under its current name and the one before (jessie-dnsutils). */
const dnsutilsNames = [e2e("glibc-dns-testing"), e2e("jessie-dnsutils")];
const nginxNames = ["nginx", "library/nginx", "docker.io/library/nginx", e2e("nginx")];

const upstreamMissing = (image: string, binary: UpstreamBinary): MissingImage => ({
  missing: `image ${image} runs the ${binary} binary of packages/testbed/upstream, which is missing (npx switchyard-lab upstream build --only ${binary})`,
});
const hostMissing = (image: string, program: string, pkg: string): MissingImage => ({
  missing: `image ${image} runs the host's ${program}, which is missing (apt-get install ${pkg})`,
});

/** Links for the release's binaries, or the first one missing. */
function upstreamLinks(
  image: string,
  c: CatalogContext,
  links: ReadonlyArray<[path: string, binary: UpstreamBinary]>,
): LayerEntry[] | MissingImage {
  const entries: LayerEntry[] = [];
  for (const [path, binary] of links) {
    const found = c.upstream?.(binary);
    if (!found) return upstreamMissing(image, binary);
    entries.push({ path, link: found });
  }
  return entries;
}

/**
 * agnhost as upstream's test/images/agnhost lays it out: /agnhost and /agnhost-2, a CoreDNS at /coredns, porter's
 * TLS pair, /uploads for netexec. Its tools (sh, dig, nc, curl, wget, ip) are the host's, which the root shows
 * under these files: the specs' `nc -v -u -w` wants netcat-openbsd's nc, as upstream's image has.
 */
function agnhost(image: string, c: CatalogContext): ImageSpec | MissingImage {
  const links = upstreamLinks(image, c, [
    ["/agnhost", "agnhost"],
    ["/coredns", "coredns"],
  ]);
  if ("missing" in links) return links;
  const pair = c.porterPair;
  const tls: LayerEntry[] = pair
    ? [
        { path: "/localhost.crt", copy: pair.cert },
        { path: "/localhost.key", copy: pair.key },
      ]
    : [];
  return {
    layer: {
      name: "agnhost",
      entries: [...links, { path: "/agnhost-2", link: "agnhost" }, ...tls, { path: "/uploads", dir: true }],
    },
    entrypoint: ["/agnhost"],
    cmd: ["pause"],
  };
}

/**
 * busybox: every applet linked into /usr/local/bin, first on PATH, and /bin/sh is busybox's, so `sh`, `nslookup`,
 * `wget` and `nc` are busybox's as in the image; other programs are the host's.
 */
function busybox(image: string, c: CatalogContext): ImageSpec | MissingImage {
  const bb = c.busybox?.();
  if (!bb) return hostMissing(image, "/bin/busybox", "busybox-static");
  const applets = [...bb.applets].filter((a) => /^[\w.[-]+$/.test(a) && a !== "busybox");
  return {
    layer: {
      name: "busybox",
      entries: [
        ...applets.map((a) => ({ path: `/usr/local/bin/${a}`, link: bb.path })),
        { path: "/usr/bin/sh", link: bb.path },
      ],
    },
    cmd: ["sh"],
  };
}

function dnsutils(image: string, c: CatalogContext): ImageSpec | MissingImage {
  if (!c.hostProgram?.("dig")) return hostMissing(image, "dig", "dnsutils");
  const links = upstreamLinks(image, c, [["/coredns", "coredns"]]);
  if ("missing" in links) return links;
  return { layer: { name: "glibc-dns-testing", entries: links }, cmd: ["bash"] };
}

/** Debian's nginx with its default site on port 80, logging to the container's output as the image does. */
function nginx(image: string, c: CatalogContext): ImageSpec | MissingImage {
  if (!c.hostProgram?.("nginx")) return hostMissing(image, "nginx", "nginx");
  return {
    layer: {
      name: "nginx",
      entries: [
        { path: "/var/log/nginx/access.log", link: "/dev/stdout" },
        { path: "/var/log/nginx/error.log", link: "/dev/stderr" },
      ],
    },
    cmd: ["nginx", "-g", "daemon off;"],
  };
}

type Maker = (image: string, c: CatalogContext) => ImageSpec | MissingImage;

/** The release's own program as the image's only file. */
const upstreamImage =
  (layerName: string, path: string, binary: UpstreamBinary, entrypoint: boolean): Maker =>
  (image, c) => {
    const links = upstreamLinks(image, c, [[path, binary]]);
    if ("missing" in links) return links;
    return { layer: { name: layerName, entries: links }, ...(entrypoint ? { entrypoint: [path] } : {}) };
  };

const makers = new Map<string, Maker>([
  // kubeadm's kube-proxy DaemonSet gives the command; its CoreDNS Deployment gives only args.
  [
    "registry.k8s.io/kube-proxy",
    upstreamImage("kube-proxy", "/usr/local/bin/kube-proxy", "kube-proxy", false),
  ],
  ["registry.k8s.io/coredns/coredns", upstreamImage("coredns", "/coredns", "coredns", true)],
  [e2e("agnhost"), agnhost],
  [
    e2e("regression-issue-74839"),
    upstreamImage("regression-issue-74839", "/regression-issue-74839", "regression-issue-74839", true),
  ],
  // The suite runs its iptables and conntrack commands; the host has them.
  ["registry.k8s.io/build-image/distroless-iptables", () => ({ layer: { name: "host", entries: [] } })],
  ...busyboxNames.map((n): [string, Maker] => [n, busybox]),
  ...dnsutilsNames.map((n): [string, Maker] => [n, dnsutils]),
  ...nginxNames.map((n): [string, Maker] => [n, nginx]),
]);

/** The image of that name (no tag) as the lab runs it; undefined when the catalog does not have it. */
export function catalogImage(
  name: string,
  image: string,
  c: CatalogContext,
): ImageSpec | MissingImage | undefined {
  return makers.get(name)?.(image, c);
}

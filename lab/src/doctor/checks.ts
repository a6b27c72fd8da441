import { versionAtLeast } from "@switchyard/kube/node-version";
import type { LabRuntime } from "../netns/state.js";

/** What `doctor` found on this machine (doctor/facts.ts gathers it; tests write it by hand). */
export interface DoctorFacts {
  uid: number | undefined;
  node: { running: string; wanted: string };
  /**
   * `go version`'s version ("1.26.8"), or undefined when there is no go; what packages/testbed/upstream's
   * go.mod files want.
   */
  go: { found?: string; wanted: string };
  /** `upstream build` tries the official release downloads first (not switched off with SWITCHYARD_RELEASES=off). */
  downloads: boolean;
  /** Each upstream binary a runtime needs, and where it was found. */
  binaries: ReadonlyArray<{ name: string; path?: string }>;
  /** Commands looked up on PATH, by name (a name that is a path: whether that file exists). */
  commands: Readonly<Record<string, boolean>>;
  brNetfilter: boolean;
  /** The lab's fixed ports on 127.0.0.1: free, or why not (EADDRINUSE...). */
  ports: ReadonlyArray<{ port: number; what: string; error?: string }>;
  /** A lab or a bare control plane already up (their processes hold the ports). */
  labUp?: string;
  controlPlaneUp?: string;
  /** `docker info`: undefined when it answered, else its first error line. */
  dockerError?: string;
  disk: ReadonlyArray<{ what: string; path: string; freeBytes: number; needBytes: number }>;
}

export type Status = "ok" | "fail" | "warn";

export interface CheckResult {
  name: string;
  status: Status;
  /** What was found, and what to do about it when it is not OK. */
  text: string;
}

/** Which runtime needs what. */
const needs = {
  root: ["netns"],
  tools: ["netns"],
  brNetfilter: ["netns"],
  ports: ["netns"],
  docker: ["kind"],
} as const satisfies Record<string, readonly LabRuntime[]>;

/** Upstream binaries each runtime runs on this machine (kind's own components come in its node image). */
export const binariesFor: Record<LabRuntime, readonly string[]> = {
  netns: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kubectl"],
  kind: ["kubectl"],
};

/** Commands the netns runtime runs (nodes, rules, certificates), with the Debian package of each. */
export const netnsTools: Readonly<Record<string, string>> = {
  ip: "iproute2",
  nft: "nftables",
  iptables: "iptables",
  "iptables-save": "iptables",
  "iptables-restore": "iptables",
  conntrack: "conntrack",
  openssl: "openssl",
  // Every container's process is exec'd through it (agent/container-identity.ts).
  setpriv: "util-linux",
};

/**
 * Host programs the netns runtime's catalog images run in their containers (agent/image-catalog.ts), with the
 * Debian package of each and the images that need it. Without one the lab comes up, but a pod of those images
 * stays Waiting, so doctor warns rather than fails. A path is looked for as it is (busybox: agent/busybox.ts).
 */
export const imageTools: Readonly<Record<string, { pkg: string; images: readonly string[] }>> = {
  "/bin/busybox": { pkg: "busybox-static", images: ["busybox"] },
  dig: { pkg: "dnsutils", images: ["agnhost", "glibc-dns-testing"] },
  nc: { pkg: "netcat-openbsd", images: ["agnhost"] },
  nginx: { pkg: "nginx", images: ["nginx"] },
};

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
const major = (v: string) => Number(/^v?(\d+)/.exec(v)?.[1] ?? Number.NaN);

/** Version strings compared numerically, part by part ("1.26.8" ≥ "1.26.0"). */

/** A check's line: OK, else FAIL where the runtime needs it, else WARN (only the other runtime needs it). */
function result(
  name: string,
  ok: boolean,
  neededHere: boolean,
  okText: string,
  problem: { what: string; fix: string },
): CheckResult {
  if (ok) return { name, status: "ok", text: okText };
  const whose = neededHere ? "" : " (only the other runtime needs it)";
  return { name, status: neededHere ? "fail" : "warn", text: `${problem.what}${whose}; fix: ${problem.fix}` };
}

function missingBinaries(f: DoctorFacts, runtime: LabRuntime | undefined): string[] {
  const wanted = runtime ? binariesFor[runtime] : binariesFor.netns;
  return wanted.filter((name) => !f.binaries.find((b) => b.name === name)?.path);
}

export function binaryChecks(f: DoctorFacts, runtime: LabRuntime | undefined): CheckResult[] {
  const missing = missingBinaries(f, runtime);
  const wanted = runtime ? binariesFor[runtime] : binariesFor.netns;
  const goOk = f.go.found !== undefined && versionAtLeast(f.go.found, f.go.wanted);
  const goText = f.go.found ? `go${f.go.found}` : "no go on PATH";
  const binaries = result("binaries", missing.length === 0, true, `${wanted.join(", ")}: found`, {
    what: `missing ${missing.join(", ")}`,
    fix: 'switchyard-lab upstream build (or packages/testbed/README.md, "Already have the binaries?")',
  });
  // Every binary doctor asks for has an official release: with downloads on, Go is needed only if none answers.
  if (!goOk && missing.length > 0 && f.downloads) {
    const text = `${goText}; upstream build downloads the missing binaries, and needs Go ${f.go.wanted} or newer only if no download answers; fix: https://go.dev/dl`;
    return [binaries, { name: "go", status: "warn", text }];
  }
  return [
    binaries,
    result(
      "go",
      goOk || missing.length === 0,
      true,
      goOk
        ? `${goText} (packages/testbed/upstream wants ${f.go.wanted} or newer, to build the binaries)`
        : `${goText}; not needed: the binaries are there`,
      {
        what: `${goText}; building the missing binaries needs Go ${f.go.wanted} or newer`,
        fix: "https://go.dev/dl",
      },
    ),
  ];
}

/** The catalog images' host programs: a WARN when missing, since only pods of those images need them. */
function imageCheck(f: DoctorFacts, runtime: LabRuntime | undefined): CheckResult {
  const tools = Object.keys(imageTools);
  const missing = tools.filter((t) => !f.commands[t]);
  const of = (list: readonly string[], key: "pkg" | "images") => [
    ...new Set(list.flatMap((t) => imageTools[t]?.[key] ?? [])),
  ];
  const images = of(missing, "images");
  if (missing.length === 0)
    return {
      name: "images",
      status: "ok",
      text: `${tools.join(", ")}: found (${of(tools, "images").join(", ")})`,
    };
  const whose = runtime === "kind" ? " (only the other runtime needs it)" : "";
  return {
    name: "images",
    status: "warn",
    text:
      `missing ${missing.join(", ")}: pods of the netns lab's ${images.join(", ")} image${images.length === 1 ? "" : "s"} ` +
      `would stay Waiting${whose}; fix: apt-get install ${of(missing, "pkg").join(" ")}`,
  };
}

function portCheck(f: DoctorFacts, neededHere: boolean): CheckResult {
  const taken = f.ports.filter((p) => p.error !== undefined);
  const list = f.ports.map((p) => p.port).join(", ");
  if (taken.length === 0) return { name: "ports", status: "ok", text: `${list} free on 127.0.0.1` };
  const what = taken.map((p) => `${p.port} (${p.what}: ${p.error})`).join(", ");
  if (f.labUp) return { name: "ports", status: "ok", text: `${what}: held by the lab up in ${f.labUp}` };
  return result("ports", false, neededHere, "", {
    what: `taken on 127.0.0.1: ${what}`,
    fix: f.controlPlaneUp
      ? `switchyard-lab controlplane down --state-dir ${f.controlPlaneUp}`
      : `stop what listens there (ss -ltnp 'sport = :${taken[0]?.port}')`,
  });
}

function diskCheck(f: DoctorFacts): CheckResult {
  if (f.disk.length === 0)
    return {
      name: "disk",
      status: "ok",
      text: "nothing to check here (kind keeps its nodes in Docker's data)",
    };
  const low = f.disk.filter((d) => d.freeBytes < d.needBytes);
  const text = f.disk.map((d) => `${d.what} ${d.path}: ${gib(d.freeBytes)} free`).join("; ");
  if (low.length === 0) return { name: "disk", status: "ok", text };
  const fix = low.map((d) => `${d.what} needs ${gib(d.needBytes)}`).join(", ");
  return { name: "disk", status: "fail", text: `${text}; fix: free space (${fix})` };
}

/**
 * Every check, in the order printed, for the runtime chosen (undefined: none works here, so every problem is
 * one). Pure: the facts come in, the lines go out.
 */
export function doctorChecks(f: DoctorFacts, runtime: LabRuntime | undefined): CheckResult[] {
  const here = (of: readonly LabRuntime[]) => runtime === undefined || of.includes(runtime);
  const missingTools = Object.keys(netnsTools).filter((t) => !f.commands[t]);
  const packages = [...new Set(missingTools.map((t) => netnsTools[t]))].join(" ");
  return [
    result("root", f.uid === 0, here(needs.root), "running as root", {
      what: `running as uid ${f.uid ?? "?"}`,
      fix: "run with sudo, or use --runtime kind",
    }),
    result(
      "node",
      major(f.node.running) === major(f.node.wanted),
      true,
      `${f.node.running} (the project's line: ${f.node.wanted} in .node-version)`,
      {
        what: `${f.node.running}, not the project's line (${f.node.wanted})`,
        fix: "run lab/bin/switchyard-lab.js or npx switchyard-lab, which switch to it",
      },
    ),
    ...binaryChecks(f, runtime),
    result(
      "tools",
      missingTools.length === 0,
      here(needs.tools),
      `${Object.keys(netnsTools).join(", ")}: found`,
      {
        what: `missing ${missingTools.join(", ")}`,
        fix: `apt-get install ${packages}`,
      },
    ),
    imageCheck(f, runtime),
    result("br_netfilter", f.brNetfilter, here(needs.brNetfilter), "loaded", {
      what:
        "not loaded: replies between pods on one node's bridge skip conntrack, so a pod reaching a Service " +
        "endpoint on its own node gets them from the wrong address",
      fix: "modprobe br_netfilter",
    }),
    portCheck(f, here(needs.ports)),
    result("docker", f.dockerError === undefined, here(needs.docker), "the engine answers (docker info)", {
      what: `docker info: ${f.dockerError}`,
      fix: "start Docker (Docker Desktop, or systemctl start docker)",
    }),
    diskCheck(f),
  ];
}

/** The report: one line per check, then what it means for the runtime. */
export function doctorReport(checks: readonly CheckResult[], runtime: LabRuntime | undefined): string {
  const label: Record<Status, string> = { ok: "OK", fail: "FAIL", warn: "WARN" };
  const width = Math.max(...checks.map((c) => c.name.length)) + 2;
  const failed = checks.filter((c) => c.status === "fail").length;
  const verdict =
    failed === 0
      ? `the ${runtime ?? "chosen"} runtime has what it needs`
      : `${failed} problem${failed === 1 ? "" : "s"}: fix ${failed === 1 ? "it" : "them"} before switchyard-lab up${runtime ? ` --runtime ${runtime}` : ""}`;
  return [...checks.map((c) => `${label[c.status].padEnd(6)}${c.name.padEnd(width)}${c.text}`), verdict].join(
    "\n",
  );
}

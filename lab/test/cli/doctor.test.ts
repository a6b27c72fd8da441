import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type DoctorFacts,
  doctorChecks,
  doctorReport,
  imageTools,
  netnsTools,
} from "../../src/doctor/checks.js";

const GiB = 2 ** 30;

/** A machine with everything either runtime needs. */
function healthy(): DoctorFacts {
  return {
    uid: 0,
    node: { running: "v24.22.3", wanted: "24.22.3" },
    go: { found: "1.26.8", wanted: "1.26.0" },
    downloads: true,
    binaries: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kubectl"].map(
      (name) => ({
        name,
        path: `/cache/${name}`,
      }),
    ),
    commands: Object.fromEntries(
      [...Object.keys(netnsTools), ...Object.keys(imageTools)].map((t) => [t, true]),
    ),
    brNetfilter: true,
    ports: [
      { port: 6443, what: "kube-apiserver" },
      { port: 2379, what: "etcd" },
    ],
    disk: [{ what: "the lab's folder", path: "/state", freeBytes: 10 * GiB, needBytes: GiB }],
  };
}

const byName = (f: DoctorFacts, runtime: "netns" | "kind" | undefined) =>
  Object.fromEntries(doctorChecks(f, runtime).map((c) => [c.name, c]));

describe("doctor's checks", () => {
  test("a machine with everything: every line OK, for either runtime", () => {
    for (const runtime of ["netns", "kind"] as const) {
      const checks = doctorChecks(healthy(), runtime);
      assert.deepEqual(
        checks.map((c) => c.name),
        ["root", "node", "binaries", "go", "tools", "images", "br_netfilter", "ports", "docker", "disk"],
      );
      assert.deepEqual(
        checks.filter((c) => c.status !== "ok"),
        [],
      );
      assert.match(doctorReport(checks, runtime), new RegExp(`\\nthe ${runtime} runtime has what it needs$`));
    }
  });

  test("what only netns needs fails for netns and warns for kind, and the other way round", () => {
    const f: DoctorFacts = {
      ...healthy(),
      uid: 1000,
      brNetfilter: false,
      commands: { ...healthy().commands, nft: false, conntrack: false, "iptables-save": false },
      dockerError: "Cannot connect to the Docker daemon",
    };
    const netns = byName(f, "netns");
    assert.equal(netns.root?.status, "fail");
    assert.equal(netns.root?.text, "running as uid 1000; fix: run with sudo, or use --runtime kind");
    assert.equal(
      netns.tools?.text,
      "missing nft, iptables-save, conntrack; fix: apt-get install nftables iptables conntrack",
    );
    assert.match(netns.br_netfilter?.text ?? "", /fix: modprobe br_netfilter$/);
    assert.equal(netns.docker?.status, "warn");
    assert.match(netns.docker?.text ?? "", /\(only the other runtime needs it\); fix: start Docker/);
    const kind = byName(f, "kind");
    assert.deepEqual(
      Object.values(kind)
        .filter((c) => c.status !== "ok")
        .map((c) => [c.name, c.status]),
      [
        ["root", "warn"],
        ["tools", "warn"],
        ["br_netfilter", "warn"],
        ["docker", "fail"],
      ],
    );
    assert.match(
      doctorReport(Object.values(kind), "kind"),
      /\n1 problem: fix it before switchyard-lab up --runtime kind$/,
    );
    // With no runtime working, every problem counts.
    assert.equal(doctorChecks(f, undefined).filter((c) => c.status === "fail").length, 4);
  });

  test("Go matters only while binaries are missing and downloads are off; kind needs kubectl alone", () => {
    const noGo: DoctorFacts = { ...healthy(), go: { wanted: "1.26.0" }, downloads: false };
    assert.deepEqual(byName(noGo, "netns").go, {
      name: "go",
      status: "ok",
      text: "no go on PATH; not needed: the binaries are there",
    });
    const missing: DoctorFacts = {
      ...noGo,
      binaries: healthy().binaries.filter((b) => b.name !== "kube-scheduler"),
    };
    const netns = byName(missing, "netns");
    assert.match(netns.binaries?.text ?? "", /^missing kube-scheduler; fix: switchyard-lab upstream build/);
    assert.equal(
      netns.go?.text,
      "no go on PATH; building the missing binaries needs Go 1.26.0 or newer; fix: https://go.dev/dl",
    );
    assert.equal(byName(missing, "kind").binaries?.status, "ok");
    const oldGo: DoctorFacts = { ...missing, go: { found: "1.25.9", wanted: "1.26.0" } };
    assert.equal(byName(oldGo, "netns").go?.status, "fail");
    // With the release downloads on (the default), a missing Go is a warning: Go builds only what no download gave.
    assert.deepEqual(byName({ ...missing, downloads: true }, "netns").go, {
      name: "go",
      status: "warn",
      text:
        "no go on PATH; upstream build downloads the missing binaries, and needs Go 1.26.0 or newer only if no " +
        "download answers; fix: https://go.dev/dl",
    });
  });

  test("no static busybox: a warning naming busybox-static, never a failure, and kind is told it is not its own", () => {
    const f: DoctorFacts = { ...healthy(), commands: { ...healthy().commands, "/bin/busybox": false } };
    const netns = byName(f, "netns");
    assert.deepEqual(netns.images, {
      name: "images",
      status: "warn",
      text:
        "missing /bin/busybox: pods of the netns lab's busybox image would stay Waiting; " +
        "fix: apt-get install busybox-static",
    });
    assert.match(doctorReport(Object.values(netns), "netns"), /\nthe netns runtime has what it needs$/);
    assert.match(byName(f, "kind").images?.text ?? "", /\(only the other runtime needs it\); fix:/);
    const noNc: DoctorFacts = { ...f, commands: { ...f.commands, nc: false, nginx: false } };
    assert.match(
      byName(noNc, "netns").images?.text ?? "",
      /^missing \/bin\/busybox, nc, nginx: pods of the netns lab's busybox, agnhost, nginx images .*fix: apt-get install busybox-static netcat-openbsd nginx$/,
    );
  });

  test("taken ports: fine when the lab itself holds them, else what to stop", () => {
    const taken = { ...healthy(), ports: [{ port: 6443, what: "kube-apiserver", error: "EADDRINUSE" }] };
    assert.equal(byName({ ...taken, labUp: "/state" }, "netns").ports?.status, "ok");
    assert.match(
      byName({ ...taken, controlPlaneUp: "/cp" }, "netns").ports?.text ?? "",
      /fix: switchyard-lab controlplane down --state-dir \/cp$/,
    );
    assert.match(
      byName(taken, "netns").ports?.text ?? "",
      /fix: stop what listens there \(ss -ltnp 'sport = :6443'\)$/,
    );
    assert.equal(byName(taken, "kind").ports?.status, "warn");
  });

  test("too little disk fails with what needs the space; a Node of another line fails", () => {
    const low = {
      ...healthy(),
      disk: [{ what: "the build cache", path: "/c", freeBytes: GiB, needBytes: 3 * GiB }],
    };
    assert.equal(
      byName(low, "kind").disk?.text,
      "the build cache /c: 1.0 GiB free; fix: free space (the build cache needs 3.0 GiB)",
    );
    const node20 = { ...healthy(), node: { running: "v20.19.0", wanted: "24.22.3" } };
    assert.equal(byName(node20, "kind").node?.status, "fail");
  });
});

// switchyard-lab as a user runs it: one process per command line, exit codes, stdout against stderr, and the
// shells it hands over to (completion scripts in real bash, zsh and fish; `shell`).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { commandTable } from "../../src/cli/commands.js";
import { repoRoot } from "../../src/self.js";
import { fishCompletions, runCli } from "./harness.js";

const topLevel = (commandTable.subcommands ?? []).map((c) => c.name);
const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const lines = (s: string) => s.trimEnd().split("\n");

/** A lab folder whose lab.json names a kubeconfig, a fake kubectl that prints what it got, and a home of its own. */
function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), "sy-cli-"));
  mkdirSync(join(dir, "lab"));
  mkdirSync(join(dir, "home"));
  writeFileSync(
    join(dir, "lab", "lab.json"),
    JSON.stringify({ runtime: "netns", server: "x", kubeconfig: "/k/admin.conf" }),
  );
  const kubectl = join(dir, "kubectl");
  writeFileSync(kubectl, '#!/bin/sh\necho "kubectl $* KUBECONFIG=$KUBECONFIG"\n');
  chmodSync(kubectl, 0o755);
  const env = {
    HOME: join(dir, "home"),
    XDG_CACHE_HOME: join(dir, "cache"),
    SWITCHYARD_KUBECTL: kubectl,
    SWITCHYARD_LAB_DIR: join(dir, "lab"),
  };
  return { dir, kubectl, env };
}

describe("switchyard-lab as a process", () => {
  test("bare: the list of commands on stdout, exit 0 (kind and kubectl do the same)", async () => {
    const r = await runCli([]);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /^switchyard-lab: Switchyard's lab\./);
    assert.match(r.stdout, /\nUsage:\n {2}switchyard-lab COMMAND \[flags\]\n/);
  });

  test("a typo: did you mean, the usage line last, exit 2, nothing on stdout", async () => {
    const r = await runCli(["dwn"]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [
      'switchyard-lab: unknown command "dwn"; did you mean "down"?',
      "Usage: switchyard-lab COMMAND [flags] (switchyard-lab --help for more)",
    ]);
  });

  test("up takes controlplane up's port flags (netns): a bad port or the kind runtime is refused, exit 2", async () => {
    const help = await runCli(["up", "--help"]);
    for (const flag of ["--apiserver-port", "--etcd-port", "--etcd-peer-port", "--scheduler-port"])
      assert.match(help.stdout, new RegExp(`${flag} PORT`));
    const bad = await runCli(["up", "--runtime", "netns", "--etcd-port", "70000"]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^switchyard-lab: up: --etcd-port must be a port number 1-65535, got "70000"$/m);
    const kind = await runCli(["up", "--runtime", "kind", "--apiserver-port", "7443"]);
    assert.equal(kind.code, 2, kind.stderr);
    assert.match(kind.stderr, /^switchyard-lab: up: --apiserver-port does not apply to the kind runtime$/m);
  });

  test("`up down` is refused before anything is brought up (test/lab-args.test.ts: what `npm run lab down` runs)", async () => {
    const { dir } = sandbox();
    const state = join(dir, "new-lab");
    const r = await runCli(["up", "down", "--state-dir", state]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unexpected argument "down" .*did you mean "switchyard-lab down"\?\n/);
    assert.equal(existsSync(state), false, "no lab folder was made");
  });

  test("help CMD and CMD --help print the same on stdout, exit 0", async () => {
    const a = await runCli(["help", "controlplane", "up"]);
    const b = await runCli(["controlplane", "up", "--help"]);
    assert.equal(a.code, 0);
    assert.equal(b.code, 0);
    assert.equal(a.stdout, b.stdout);
    assert.match(a.stdout, /--apiserver-port PORT +kube-apiserver's secure port \(default 6443\)/);
  });

  test("version and --version: the lab's version, the pinned releases, the Node running it", async () => {
    const pinned = JSON.parse(
      readFileSync(join(repoRoot, "packages", "testbed", "upstream", "versions.json"), "utf8"),
    ) as Record<string, string>;
    const labVersion = (
      JSON.parse(readFileSync(join(repoRoot, "lab", "package.json"), "utf8")) as { version: string }
    ).version;
    for (const args of [["version"], ["--version"]]) {
      const r = await runCli(args);
      assert.equal(r.code, 0);
      const out = lines(r.stdout);
      assert.match(
        out[0] ?? "",
        new RegExp(`^switchyard-lab ${labVersion.replaceAll(".", "\\.")}( \\(commit [0-9a-f]+\\))?$`),
      );
      for (const [name, version] of Object.entries(pinned))
        assert.ok(
          out.some((l) => l.split(/\s+/).join(" ") === `${name} ${version}`),
          `${name} ${version}`,
        );
      assert.ok(
        out.includes(
          `node  ${process.version} (${process.platform}/${process.arch})`.replace(
            "node  ",
            "node".padEnd(12),
          ),
        ),
      );
    }
  });

  test("kubectl: every argument to kubectl with the lab's kubeconfig, its exit code; a lone --help is ours", async () => {
    const { env } = sandbox();
    const r = await runCli(["kubectl", "get", "pods", "-o", "wide", "--help"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "kubectl get pods -o wide --help KUBECONFIG=/k/admin.conf\n", r.stderr);
    const ours = await runCli(["kubectl", "--help"], { env });
    assert.match(ours.stdout, /^Runs kubectl/);
  });

  test("an unknown --set key of a scenario is refused, exit 2", async () => {
    const r = await runCli(["scenario", "slice-churn", "--set", "podz=3"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^switchyard-lab: scenario slice-churn: no parameter "podz"; did you mean "pods"/);
  });

  test("doctor: a line per check, OK, WARN or FAIL, and exit 1 exactly when one fails", async () => {
    const { dir } = sandbox();
    for (const runtime of ["netns", "kind"]) {
      const r = await runCli(["doctor", "--runtime", runtime, "--state-dir", join(dir, "lab")], {
        timeoutMs: 60_000,
      });
      const checks = lines(r.stdout).slice(1, -1);
      assert.deepEqual(
        checks.map((l) => l.split(/\s+/)[1]),
        ["root", "node", "binaries", "go", "tools", "images", "br_netfilter", "ports", "docker", "disk"],
        r.stdout,
      );
      for (const l of checks) assert.match(l, /^(OK|WARN|FAIL) /);
      assert.equal(r.code, checks.some((l) => l.startsWith("FAIL")) ? 1 : 0, r.stdout);
    }
  });
});

describe("completion scripts in real shells", () => {
  const script = async (shell: string) => {
    const r = await runCli(["completion", shell]);
    assert.equal(r.code, 0, r.stderr);
    const file = join(mkdtempSync(join(tmpdir(), "sy-completion-")), `switchyard-lab.${shell}`);
    writeFileSync(file, r.stdout);
    return file;
  };

  test("bash: registered for switchyard-lab; offers commands, flags, values, scenario keys, help's commands", async () => {
    const file = await script("bash");
    // compopt only works inside a completion bash started itself; called by hand it is a no-op here.
    const probe = `source '${file}'
complete -p switchyard-lab
compopt() { :; }
t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _switchyard_lab; echo "\${COMPREPLY[*]}"; }
t switchyard-lab d
t switchyard-lab up --pro
t switchyard-lab up --proxy-mode ""
t switchyard-lab up --runtime = k
t switchyard-lab controlplane ""
t switchyard-lab scenario slice-churn --set ""
t switchyard-lab help controlplane ""
t switchyard-lab kubectl get ""
t switchyard-lab completion ""`;
    const out = execFileSync("bash", ["--norc", "-c", probe], { encoding: "utf8" });
    assert.deepEqual(lines(out), [
      "complete -F _switchyard_lab switchyard-lab",
      topLevel.filter((n) => n.startsWith("d")).join(" "),
      "--proxy-mode",
      "iptables nftables ebpf",
      "kind",
      "up down status",
      "pods= pods-per-node= remove= trickle= c3-pods= quiet-ms=",
      "up down status",
      "",
      "bash zsh fish",
    ]);
  });

  test("zsh: the script parses, and its function offers what bash's does", {
    skip: has("zsh") ? false : "no zsh",
  }, async () => {
    const file = await script("zsh");
    execFileSync("zsh", ["-n", file]);
    // The completion system's builtins stand in as printers: the logic under test is the walk and the offers.
    const probe = `compdef() { :; }
_describe() { local -a items; items=("\${(@P)4}"); print -r -- "\${(j: :)\${(@)items%%:*}}"; }
compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; [[ $1 == "" ]] && shift; done; [[ $1 == -- ]] && shift; print -r -- "$*"; }
_files() { print -r -- "files $*"; }
source '${file}'
t() { words=("$@"); CURRENT=\${#words}; _switchyard_lab; }
t switchyard-lab ""
t switchyard-lab up --proxy-mode ""
t switchyard-lab controlplane up --state-dir ""
t switchyard-lab help scenario ""`;
    const out = execFileSync("zsh", ["-f", "-c", probe], { encoding: "utf8" });
    const [top = "", ...rest] = lines(out);
    assert.equal(top, topLevel.join(" "));
    assert.deepEqual(rest, [
      "iptables nftables ebpf",
      "files -/",
      "slice-churn hints topology-auto lameduck scale proxy-down",
    ]);
  });

  test("fish: the script parses, and fish's own completion offers from it", {
    skip: has("fish") ? false : "no fish",
  }, async () => {
    const file = await script("fish");
    execFileSync("fish", ["--no-execute", file]);
    const complete = (line: string) => fishCompletions(file, line);
    assert.deepEqual(complete("switchyard-lab contr"), ["controlplane"]);
    // fish sorts what it offers.
    assert.deepEqual(complete("switchyard-lab up --proxy-mode "), ["ebpf", "iptables", "nftables"]);
    assert.deepEqual(complete("switchyard-lab help upstream "), ["build", "mirror", "versions", "where"]);
  });
});

describe("switchyard-lab shell", () => {
  const shells = [
    { shell: "/bin/bash", prompt: 'echo "PROMPT=$PS1"' },
    { shell: "/usr/bin/zsh", prompt: 'echo "PROMPT=$PROMPT"' },
    { shell: "/usr/bin/fish", prompt: "echo PROMPT=(fish_prompt)" },
  ];
  for (const { shell, prompt } of shells) {
    test(`${shell}: kubectl and switchyard-lab on PATH, KUBECONFIG set, the prompt marked, completion loaded, its exit code`, {
      skip: existsSync(shell) ? false : `no ${shell}`,
    }, async () => {
      const { env, kubectl, dir } = sandbox();
      const completion = shell.endsWith("bash")
        ? "complete -p switchyard-lab"
        : shell.endsWith("zsh")
          ? "echo $_comps[switchyard-lab]"
          : "complete -C 'switchyard-lab contr'";
      const input = [
        prompt,
        "command -v kubectl",
        "command -v switchyard-lab",
        "echo KUBECONFIG=$KUBECONFIG",
        completion,
        "exit 7",
        "",
      ].join("\n");
      const r = await runCli(["shell"], { env: { ...env, SHELL: shell }, input });
      assert.equal(r.code, 7, `${r.stdout}\n${r.stderr}`);
      const out = lines(r.stdout).filter((l) => !l.startsWith("\u001b"));
      const promptLine = out.find((l) => l.startsWith("PROMPT="));
      assert.match(promptLine ?? "", /^PROMPT=\(switchyard-lab\) /);
      assert.ok(out.includes(kubectl), r.stdout);
      const link = join(dir, "cache", "switchyard", "bin", "switchyard-lab");
      assert.ok(out.includes(link), r.stdout);
      assert.equal(readlinkSync(link), join(repoRoot, "lab", "bin", "switchyard-lab.js"));
      assert.ok(out.includes("KUBECONFIG=/k/admin.conf"), r.stdout);
      assert.ok(
        out.some((l) =>
          /complete -F _switchyard_lab switchyard-lab|^_switchyard_lab$|^controlplane\t/.test(l),
        ),
        r.stdout,
      );
    });
  }
});

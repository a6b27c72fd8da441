// dashboard, explain, lb list and trace are commands of the table like the others: a mistyped flag is refused
// with the flag it was probably meant to be and the usage line, exit 2, and the completion scripts offer their
// flags.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { commandTable } from "../../src/cli/commands.js";
import { bashCompletion } from "../../src/cli/completion/bash.js";
import { fishCompletion } from "../../src/cli/completion/fish.js";
import { fishCompletions, runMain } from "./harness.js";

const lines = (s: string) => s.trimEnd().split("\n");
const usage = {
  dashboard: "Usage: switchyard-lab dashboard [flags] (switchyard-lab dashboard --help for more)",
  explain:
    "Usage: switchyard-lab explain --from POD|IP --to SERVICE|IP:PORT [flags] (switchyard-lab explain --help for more)",
  trace: "Usage: switchyard-lab trace SERVICE [flags] (switchyard-lab trace --help for more)",
  lb: "Usage: switchyard-lab lb list [flags] (switchyard-lab lb list --help for more)",
};

describe("dashboard, explain, lb list and trace: a mistyped flag gets a suggestion, the usage line, exit 2", () => {
  const cases = [
    { args: ["dashboard", "--prot", "8080"], said: "dashboard: unknown flag --prot; did you mean --port?" },
    {
      args: ["dashboard", "--state", "/tmp/lab"],
      said: "dashboard: unknown flag --state; did you mean --state-dir?",
    },
    {
      args: ["explain", "--form", "client", "--to", "echo"],
      said: "explain: unknown flag --form; did you mean --from?",
    },
    {
      args: ["explain", "--from", "client", "--to", "echo", "--nodes", "node-1"],
      said: "explain: unknown flag --nodes; did you mean --node?",
    },
    {
      args: ["explain", "-from", "client", "--to", "echo"],
      said: "explain: unknown shorthand flag -from; flags take two dashes: --from",
    },
    {
      args: ["trace", "echo", "--chagnes", "3"],
      said: "trace: unknown flag --chagnes; did you mean --changes?",
    },
    {
      args: ["trace", "echo", "--wach"],
      said: "trace: unknown flag --wach; did you mean --watch or --wait?",
    },
    { args: ["lb", "list", "--backend"], said: "lb list: unknown flag --backend; did you mean --backends?" },
    { args: ["lb", "list", "--nod", "node-1"], said: "lb list: unknown flag --nod; did you mean --node?" },
  ];
  for (const { args, said } of cases) {
    test(args.join(" "), async () => {
      const r = await runMain(args);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, "", "nothing ran");
      const command = args[0] as keyof typeof usage;
      assert.deepEqual(lines(r.stderr), [`switchyard-lab: ${said}`, usage[command]]);
    });
  }

  test("lb list takes one view: --backends and --revnat together are refused before any lab is opened", async () => {
    const r = await runMain(["lb", "list", "--backends", "--revnat", "--state-dir", "/nonexistent/lab"]);
    assert.equal(r.code, 2);
    assert.deepEqual(lines(r.stderr), [
      "switchyard-lab: lb list: --backends or --revnat, not both",
      usage.lb,
    ]);
  });

  test("a value outside --proto's choices: the close one suggested", async () => {
    const r = await runMain(["explain", "--from", "client", "--to", "echo", "--proto", "ud"]);
    assert.equal(r.code, 2);
    assert.deepEqual(lines(r.stderr), [
      'switchyard-lab: explain: --proto must be tcp or udp, got "ud"; did you mean "udp"?',
      usage.explain,
    ]);
  });
});

describe("completion offers the flags of dashboard, explain, lb list and trace", () => {
  test("bash: their flags, --proto's values, folders for --state-dir", () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-complete-"));
    mkdirSync(join(dir, "labs"));
    const file = join(dir, "switchyard-lab.bash");
    writeFileSync(file, bashCompletion(commandTable));
    // compopt only works inside a completion bash started itself; called by hand it is a no-op here.
    const probe = `source '${file}'
compopt() { :; }
t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _switchyard_lab; echo "\${COMPREPLY[*]}"; }
t switchyard-lab dashboard --
t switchyard-lab dashboard --state-dir '${dir}/la'
t switchyard-lab explain --
t switchyard-lab explain --from client --pro
t switchyard-lab explain --from client --proto ""
t switchyard-lab explain --proto = u
t switchyard-lab trace echo --
t switchyard-lab trace echo --w
t switchyard-lab lb ""
t switchyard-lab lb list --`;
    const out = execFileSync("bash", ["--norc", "-c", probe], { encoding: "utf8" });
    assert.deepEqual(lines(out), [
      "--port --state-dir --help",
      `${dir}/labs`,
      "--from --to --proto --node --state-dir --help",
      "--proto",
      "tcp udp",
      "udp",
      "--changes --watch --wait --timeout --state-dir --help",
      "--watch --wait",
      "list",
      "--node --backends --revnat --state-dir --help",
    ]);
  });

  test("fish: its own completion offers their flags and --proto's values", {
    skip: spawnSync("sh", ["-c", "command -v fish"]).status === 0 ? false : "no fish",
  }, () => {
    const file = join(mkdtempSync(join(tmpdir(), "sy-complete-")), "switchyard-lab.fish");
    writeFileSync(file, fishCompletion(commandTable));
    assert.deepEqual(fishCompletions(file, "switchyard-lab dashboard --p"), ["--port"]);
    assert.deepEqual(fishCompletions(file, "switchyard-lab explain --proto "), ["tcp", "udp"]);
    assert.deepEqual(fishCompletions(file, "switchyard-lab trace echo --c"), ["--changes"]);
    assert.deepEqual(fishCompletions(file, "switchyard-lab lb list --r"), ["--revnat"]);
  });
});

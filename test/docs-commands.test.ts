// Every command the docs show exists as shown: each `switchyard-lab ...` / `npx switchyard-lab ...` line of the
// README files and docs/ is held against the CLI's command table and parser (its --help must exit 0, every
// flag must be one the command takes, each choice one it accepts, `--set` keys ones the scenario declares),
// and each `npm run X` against the package's scripts (`npm run lab ARGS` as the switchyard-lab command it runs).
// The fake pages below prove the check fails on a command, a flag or a script that does not exist.
// The same pages' measured numbers ("took 18 s", "about 55 MiB") must carry the command that measured them and a
// date, in their paragraph or the one before (test/docs/measured-numbers.ts says exactly what counts).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, test } from "node:test";
import { commandTable, runMain, scenarioParams } from "@switchyard/lab/cli";
import { scenarios } from "@switchyard/lab/scenarios";
import { type CommandFacts, commandProblems } from "./docs/check-command.js";
import { codeSnippets } from "./docs/markdown-code.js";
import { unbackedNumbers } from "./docs/measured-numbers.js";
import { shownCommands } from "./docs/shown-commands.js";

const root = join(import.meta.dirname, "..");

/** The pages a newcomer reads: the root README, docs/, lab's README and every app's and package's. */
function docPages(): string[] {
  const markdownUnder = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? markdownUnder(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
    );
  const readmes = (group: string) =>
    readdirSync(join(root, group))
      .map((d) => join(root, group, d, "README.md"))
      .filter((f) => existsSync(f));
  return [
    join(root, "README.md"),
    ...markdownUnder(join(root, "docs")),
    join(root, "lab", "README.md"),
    ...readmes("apps"),
    ...readmes("packages"),
  ];
}

function packageScripts(where: { dir?: string; workspace?: string }): Record<string, string> | string {
  const workspaces = [
    "lab",
    ...["apps", "packages"].flatMap((g) => readdirSync(join(root, g)).map((d) => `${g}/${d}`)),
  ];
  const manifest = (dir: string) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  let dir = where.dir ?? ".";
  if (where.workspace) {
    const found = workspaces.find((w) => w === where.workspace || manifest(w).name === where.workspace);
    if (!found) return `no workspace "${where.workspace}"`;
    dir = found;
  }
  if (!existsSync(join(root, dir, "package.json"))) return `no package.json in ${dir}`;
  return manifest(dir).scripts ?? {};
}

const helpCache = new Map<string, Promise<{ code: number; text: string }>>();

const facts: CommandFacts = {
  root: commandTable,
  help(path) {
    const key = path.join(" ");
    let answer = helpCache.get(key);
    if (!answer) {
      answer = runMain([...path, "--help"]).then((r) => ({ code: r.code, text: r.stdout + r.stderr }));
      helpCache.set(key, answer);
    }
    return answer;
  },
  setProblem(path, sets, full) {
    const s = scenarios.find((x) => x.name === path[1]);
    if (!s) return undefined;
    try {
      scenarioParams(s, sets, full);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  },
  scripts: packageScripts,
};

/** Every problem of a page's commands, as `file:line: command: problem`. */
async function pageProblems(
  file: string,
  markdown: string,
): Promise<{ commands: number; problems: string[] }> {
  let commands = 0;
  const problems: string[] = [];
  for (const snippet of codeSnippets(markdown))
    for (const shown of shownCommands(snippet.text)) {
      commands++;
      for (const p of await commandProblems(facts, shown))
        problems.push(`${file}:${snippet.line}: ${snippet.text.trim()}\n    ${p}`);
    }
  return { commands, problems };
}

describe("the commands the docs show", () => {
  test("every switchyard-lab and npm run command of the docs exists, with its flags", async () => {
    let commands = 0;
    const problems: string[] = [];
    for (const file of docPages()) {
      const page = await pageProblems(relative(root, file), readFileSync(file, "utf8"));
      commands += page.commands;
      problems.push(...page.problems);
    }
    assert.ok(commands > 100, `only ${commands} commands found in the docs: the parsing lost them`);
    assert.deepEqual(
      problems,
      [],
      `${problems.length} command(s) in the docs would fail:\n${problems.join("\n")}`,
    );
  });

  test("a page with a command, a flag, a choice, a --set key or a script that does not exist fails", async () => {
    const fake = [
      "Bring it up:",
      "",
      "```sh",
      "sudo npx switchyard-lab up --nodes 3 --zones 2          # fine",
      "npx switchyard-lab upp                                  # no such command",
      "npx switchyard-lab up --node 3                          # no such flag",
      "npx switchyard-lab up --proxy-mode ipvs                 # not a choice",
      "npx switchyard-lab controlplane start                   # no such subcommand",
      "npx switchyard-lab scenario slice-churn --set podz=300  # no such parameter",
      "npx switchyard-lab explain --from client --towards echo # no such flag, beside a right one",
      "npm run lab -- --nodez 5                                # the flag goes to up",
      "npm run labs                                            # no such script",
      "```",
      "",
      "Then `npx switchyard-lab status --verbose`, or `switchyard-lab help migrat`.",
    ].join("\n");
    const { commands, problems } = await pageProblems("fake.md", fake);
    assert.equal(commands, 11);
    const expected = [
      [5, 'unknown command "upp"'],
      [6, "no flag --node", "unknown flag --node"],
      [7, "--proxy-mode takes iptables or nftables"],
      [8, 'controlplane: unknown command "start"'],
      [9, 'no parameter "podz"'],
      [10, "explain: unknown flag --towards"],
      [11, "npm run lab: up: unknown flag --nodez"],
      [12, 'no npm script "labs"'],
      [15, "status: unknown flag --verbose"],
      [15, 'help: no command "migrat"'],
    ] as const;
    for (const [line, ...words] of expected)
      assert.ok(
        problems.some((p) => p.startsWith(`fake.md:${line}:`) && words.some((w) => p.includes(w))),
        `line ${line} (${words[0]}) not reported; reported:\n${problems.join("\n")}`,
      );
    assert.equal(problems.length, expected.length, problems.join("\n"));
  });

  test("a synopsis's placeholders, choices and continuation lines are read as such, not as mistakes", async () => {
    const fake = [
      "```sh",
      "npx switchyard-lab controlplane up [--state-dir DIR] [--no-scheduler]",
      "                                   [--apiserver-port 6443] [--timeout 120]",
      "npx switchyard-lab up --runtime kind|netns [--stack upstream]",
      "sudo npx switchyard-lab scenario <name> [--set key=value ...] [--state-dir DIR]",
      "npx switchyard-lab logs <namespace>/<pod>[/<container>]",
      "npx switchyard-lab kubectl -n kube-system get pods --anything-kubectl-takes",
      'eval "$(npx switchyard-lab env)"; kubectl get ns',
      "cd lab && npm test",
      "npm run lab down",
      "```",
    ].join("\n");
    const { commands, problems } = await pageProblems("synopsis.md", fake);
    assert.equal(commands, 8);
    assert.deepEqual(problems, []);
    const wrongContinuation =
      "```sh\nnpx switchyard-lab controlplane up [--state-dir DIR]\n    [--apiserver-prt 6443]\n```";
    const wrong = await pageProblems("synopsis.md", wrongContinuation);
    assert.equal(wrong.problems.length, 1, wrong.problems.join("\n"));
    assert.match(wrong.problems[0] ?? "", /unknown flag --apiserver-prt/);
  });
});

/** A results page the docs cite carries its date (each bench/results file names its run's date in its title). */
const datedResults = (path: string) =>
  existsSync(join(root, path)) && /\b20\d\d-[01]\d-[0-3]\d\b/.test(readFileSync(join(root, path), "utf8"));

describe("the numbers the docs report", () => {
  test("every measured number of the docs carries the command that measured it and a date", () => {
    const problems = docPages().flatMap((file) =>
      unbackedNumbers(readFileSync(file, "utf8"), datedResults).map(
        (p) => `${relative(root, file)}:${p.line}: "${p.text}"`,
      ),
    );
    assert.deepEqual(
      problems,
      [],
      `${problems.length} measured number(s) without a command and a date in their paragraph or the one before:\n` +
        problems.join("\n"),
    );
  });

  test("a number without its command or its date is flagged; settings, dated runs and cited results are not", () => {
    const fake = [
      "# Times",
      "",
      "The first build takes about ten minutes on two cores.", // 3: neither
      "",
      "On 2026-12-03 `npx switchyard-lab up` was ready in 56.8 s.", // 5: both
      "",
      "`npx switchyard-lab down` took 26 s.", // 7: no date
      "",
      "On 2026-12-02, by hand, the lab was up after about", // 9: no command; the number wraps onto line 10
      "15 s.",
      "",
      "The lease lasts 15 s and the timeout is 120 s.", // 12: settings, not measurements
      "",
      "The project's run (2026-12-03, `sudo npx switchyard-lab up`):",
      "",
      "```",
      "lab ready in 56.8s",
      "```",
      "",
      "(it took 56.8 s, nodes about 15.8 s).", // 20: backed by the paragraph before the output
      "",
      "The memory peak was about 55 MiB ([results](bench/results/fake.md)).", // 22: a dated results page
      "",
      "The peak was about 54 MiB ([results](bench/results/undated.md)).", // 24: that page has no date
      "",
      "## Next",
      "",
      "Down took 26 s.", // 28: a heading stands between it and the dated run
    ].join("\n");
    const dated = (path: string) => path === "bench/results/fake.md";
    assert.deepEqual(unbackedNumbers(fake, dated), [
      { line: 3, text: "about ten minutes" },
      { line: 7, text: "took 26 s" },
      { line: 9, text: "about 15 s" },
      { line: 24, text: "about 54 MiB" },
      { line: 28, text: "took 26 s" },
    ]);
  });
});

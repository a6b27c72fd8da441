// Every command of the table, driven through main() in this process: help for each, and the mistakes every
// command refuses the same way (unknown flag with a suggestion, unexpected argument, the usage line last).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Command } from "../../src/cli/command.js";
import { commandTable } from "../../src/cli/commands.js";
import { usageLine } from "../../src/cli/help.js";
import { runMain } from "./harness.js";

/** Every command below the root with the words that name it, depth first. */
function allCommands(
  cmd: Command = commandTable,
  path: string[] = [],
): Array<{ cmd: Command; path: string[] }> {
  return (cmd.subcommands ?? []).flatMap((c) => [
    { cmd: c, path: [...path, c.name] },
    ...allCommands(c, [...path, c.name]),
  ]);
}

const commands = allCommands();
const lines = (s: string) => s.trimEnd().split("\n");

describe("the command table", () => {
  test("has every command the CLI documents, each with a summary, examples and described flags", () => {
    const top = (commandTable.subcommands ?? []).map((c) => c.name);
    for (const name of ["up", "down", "status", "kubeconfig", "logs", "migrate", "scenario", "conformance"])
      assert.ok(top.includes(name), name);
    for (const name of [
      "controlplane",
      "upstream",
      "kubectl",
      "env",
      "shell",
      "dashboard",
      "explain",
      "trace",
      "version",
      "doctor",
      "completion",
      "help",
    ])
      assert.ok(top.includes(name), name);
    for (const { cmd, path } of commands) {
      const where = path.join(" ");
      assert.ok(cmd.summary.length > 0, `${where}: summary`);
      assert.ok((cmd.examples ?? []).length > 0, `${where}: examples`);
      assert.ok(cmd.run !== undefined || (cmd.subcommands ?? []).length > 0, `${where}: runs or groups`);
      const names = (cmd.flags ?? []).map((f) => f.name);
      assert.equal(new Set(names).size, names.length, `${where}: a flag twice`);
      for (const f of cmd.flags ?? []) assert.ok(f.help.length > 0, `${where} --${f.name}: help`);
    }
  });
});

describe("help", () => {
  for (const { cmd, path } of commands) {
    const where = path.join(" ");
    test(`help ${where} and ${where} --help: the same text, every flag with its default, exit 0`, async () => {
      const viaHelp = await runMain(["help", ...path]);
      const viaFlag = await runMain([...path, "--help"]);
      const viaShort = await runMain([...path, "-h"]);
      assert.equal(viaHelp.code, 0, viaHelp.stderr);
      assert.equal(viaFlag.code, 0, viaFlag.stderr);
      assert.equal(viaFlag.stdout, viaHelp.stdout);
      assert.equal(viaShort.stdout, viaHelp.stdout);
      const text = viaHelp.stdout;
      assert.match(text, new RegExp(`\\nUsage:\\n  switchyard-lab ${path.join(" ")}`));
      assert.match(text, /\nExamples:\n/);
      for (const f of cmd.flags ?? []) {
        assert.ok(text.includes(`--${f.name}`), `--${f.name} in help ${where}`);
        // Wrapping may break the default across lines; compare with whitespace squeezed.
        if (f.default !== undefined)
          assert.ok(
            text.replace(/\s+/g, " ").includes(`(default ${f.default.replace(/\s+/g, " ")})`),
            `--${f.name}'s default`,
          );
      }
      for (const c of cmd.subcommands ?? []) assert.match(text, new RegExp(`\\n  ${c.name} `));
    });
  }

  test("a bare switchyard-lab prints every command under its group and exits 0, as kind and kubectl do", async () => {
    const r = await runMain([]);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    for (const c of commandTable.subcommands ?? [])
      assert.match(r.stdout, new RegExp(`\\n  ${c.name} +${c.summary.slice(0, 20).replace(/[()$]/g, ".")}`));
    assert.deepEqual((await runMain(["--help"])).stdout, r.stdout);
    assert.deepEqual((await runMain(["help"])).stdout, r.stdout);
  });

  test("kubectl passes --help through once it has a command of its own", async () => {
    const ours = await runMain(["kubectl", "--help"]);
    assert.match(ours.stdout, /Every argument goes to\s+kubectl/);
  });
});

describe("mistakes: one line naming the command, then its usage line, exit 2", () => {
  // Commands whose arguments the table parses (not kubectl's).
  const tableParsed = ({ cmd }: { cmd: Command }) => cmd.passthrough !== "all";
  const parsing = commands.filter((c) => tableParsed(c) && (c.cmd.run || (c.cmd.flags ?? []).length > 0));

  for (const { cmd, path } of parsing) {
    const where = path.join(" ");
    test(`${where}: unknown flags are refused with the close ones suggested`, async () => {
      const r = await runMain([...path, "--no-such-flag"]);
      assert.equal(r.code, 2);
      assert.deepEqual(lines(r.stderr), [
        `switchyard-lab: ${where}: unknown flag --no-such-flag`,
        usageLine(cmd, path),
      ]);
      for (const f of cmd.flags ?? []) {
        const typo = await runMain([...path, `--${f.name.slice(0, -1)}`]);
        assert.equal(typo.code, 2);
        assert.match(lines(typo.stderr)[0] ?? "", new RegExp(`did you mean .*--${f.name}\\b`), `--${f.name}`);
      }
    });
  }

  for (const { cmd, path } of commands.filter(
    (c) => tableParsed(c) && c.cmd.run && !c.cmd.args?.some((a) => a.variadic),
  )) {
    const where = path.join(" ");
    test(`${where}: an argument too many is refused`, async () => {
      const required = (cmd.args ?? []).map(() => "x");
      const r = await runMain([...path, ...required, "stray"]);
      assert.equal(r.code, 2);
      assert.match(
        lines(r.stderr)[0] ?? "",
        new RegExp(`^switchyard-lab: ${where}: unexpected argument "stray"`),
      );
      assert.equal(lines(r.stderr).at(-1), usageLine(cmd, path));
    });
  }

  test("a typo of a command is refused with the command suggested, at every level", async () => {
    for (const { path } of commands) {
      const typo = [...path.slice(0, -1), `${path.at(-1)}x`];
      const r = await runMain(typo);
      assert.equal(r.code, 2, typo.join(" "));
      assert.match(lines(r.stderr)[0] ?? "", new RegExp(`"${path.at(-1)}"`), typo.join(" "));
      assert.match(lines(r.stderr).at(-1) ?? "", /^Usage: switchyard-lab /);
    }
  });

  test("a group named alone says which commands it has", async () => {
    const r = await runMain(["controlplane"]);
    assert.equal(r.code, 2);
    assert.deepEqual(lines(r.stderr), [
      "switchyard-lab: controlplane: name a command: up, down, status",
      "Usage: switchyard-lab controlplane COMMAND (switchyard-lab controlplane --help for more)",
    ]);
  });

  test("`up down` (npm run lab down before it passed commands through) is refused, not a lab brought up", async () => {
    const r = await runMain(["up", "down"]);
    assert.equal(r.code, 2);
    assert.equal(
      lines(r.stderr)[0],
      'switchyard-lab: up: unexpected argument "down" (it takes no arguments); did you mean "switchyard-lab down"?',
    );
  });
});

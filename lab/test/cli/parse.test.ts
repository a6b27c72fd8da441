import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Command } from "../../src/cli/command.js";
import { parseInvocation } from "../../src/cli/parse-args.js";
import { asksForHelp, resolveCommand } from "../../src/cli/resolve.js";
import { UsageError } from "../../src/cli/usage.js";

const demo: Command = {
  name: "demo",
  summary: "a command to parse",
  flags: [
    { name: "nodes", value: "N", help: "how many" },
    { name: "mode", value: "MODE", choices: ["iptables", "nftables"], help: "which" },
    { name: "node", value: "NAME", multiple: true, help: "one of them" },
    { name: "keep", help: "a switch" },
  ],
  args: [{ name: "NAME", help: "a name", optional: true }],
  run: async () => 0,
};

const parse = (argv: string[], cmd: Command = demo) => parseInvocation(cmd, ["demo"], argv, ["up", "down"]);
const refused = (argv: string[], message: string, cmd: Command = demo) =>
  assert.throws(
    () => parse(argv, cmd),
    (err: Error) => err instanceof UsageError && err.message === message,
  );

describe("parseInvocation", () => {
  test("--flag value, --flag=value, booleans bare or =true/false, repeatable flags, positionals anywhere", () => {
    const inv = parse(["--nodes", "3", "it", "--mode=nftables", "--node", "a", "--node=b", "--keep=false"]);
    assert.equal(inv.string("nodes"), "3");
    assert.equal(inv.string("mode"), "nftables");
    assert.deepEqual(inv.list("node"), ["a", "b"]);
    assert.equal(inv.bool("keep"), false);
    assert.deepEqual(inv.positionals, ["it"]);
    assert.equal(parse(["--keep"]).bool("keep"), true);
    assert.equal(parse([]).string("nodes"), undefined);
    assert.equal(parse([]).list("node"), undefined);
  });

  test("the last value of a flag given twice wins, as pflag's", () => {
    assert.equal(parse(["--nodes", "1", "--nodes", "2"]).string("nodes"), "2");
  });

  test("after -- everything is an argument, or passes through where the command says so", () => {
    assert.deepEqual(parse(["--", "--nodes"]).positionals, ["--nodes"]);
    const through: Command = { ...demo, passthrough: "after-dashdash", args: [] };
    const inv = parse(["--keep", "--", "--ginkgo.v", "x"], through);
    assert.deepEqual(inv.passthrough, ["--ginkgo.v", "x"]);
    assert.equal(inv.bool("keep"), true);
    const all = parse(["get", "--nodes", "-o", "wide"], { ...demo, passthrough: "all" });
    assert.deepEqual(all.passthrough, ["get", "--nodes", "-o", "wide"]);
  });

  test("mistakes are one line naming the command and the flag", () => {
    refused(["--nodez", "3"], "demo: unknown flag --nodez; did you mean --nodes, --node or --mode?");
    refused(["--nod"], "demo: unknown flag --nod; did you mean --node, --nodes or --mode?");
    refused(["--zzz"], "demo: unknown flag --zzz");
    refused(["-nodes", "3"], "demo: unknown shorthand flag -nodes; flags take two dashes: --nodes");
    refused(["--nodes"], "demo: flag needs an argument: --nodes");
    refused(["--keep=maybe"], 'demo: --keep is true or false, got "maybe"');
    refused(
      ["--mode", "nftable"],
      'demo: --mode must be iptables or nftables, got "nftable"; did you mean "nftables"?',
    );
    refused(["a", "b"], 'demo: unexpected argument "b" (it takes NAME)');
    refused(
      ["a", "down"],
      'demo: unexpected argument "down" (it takes NAME); did you mean "switchyard-lab down"?',
    );
    refused([], "demo: missing NAME (a name)", { ...demo, args: [{ name: "NAME", help: "a name" }] });
    refused(["x"], 'demo: unexpected argument "x" (it takes no arguments)', { ...demo, args: undefined });
  });

  test("a run function asking for a flag its table lacks is a bug, said as one", () => {
    assert.throws(() => parse([]).string("keep"), /no string flag --keep in the command table/);
    assert.throws(() => parse([]).bool("state-dir"), /no bool flag --state-dir in the command table/);
  });
});

describe("resolveCommand and help", () => {
  const root: Command = {
    name: "switchyard-lab",
    summary: "root",
    subcommands: [
      { name: "group", summary: "g", subcommands: [{ name: "leaf", summary: "l", run: async () => 0 }] },
      { ...demo, subcommands: [{ name: "sub", summary: "s", run: async () => 0 }] },
      { name: "kubectl", summary: "k", passthrough: "all", run: async () => 0 },
    ],
  };

  test("walks the leading words; a command that runs keeps a word that is not its subcommand", () => {
    assert.deepEqual(resolveCommand(root, ["group", "leaf", "--x"]).path, ["group", "leaf"]);
    assert.deepEqual(resolveCommand(root, ["demo", "sub"]).path, ["demo", "sub"]);
    assert.deepEqual(resolveCommand(root, ["demo", "other"]).rest, ["other"]);
    assert.throws(
      () => resolveCommand(root, ["group", "leav"]),
      /^Error: group: unknown command "leav"; did you mean "leaf"\?$/,
    );
    assert.throws(() => resolveCommand(root, ["grop"]), /unknown command "grop"; did you mean "group"\?/);
  });

  test("-h and --help ask for help before --; a passthrough command only as its first argument", () => {
    assert.equal(asksForHelp(demo, ["--nodes", "3", "-h"]), true);
    assert.equal(asksForHelp(demo, ["--", "--help"]), false);
    const kubectl = root.subcommands?.[2] as Command;
    assert.equal(asksForHelp(kubectl, ["--help"]), true);
    assert.equal(asksForHelp(kubectl, ["get", "--help"]), false);
  });
});

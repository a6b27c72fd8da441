import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FlagError, type FlagSet, parseFlags } from "../../src/flags/index.js";

interface Example {
  name: string;
  count: number;
  verbose: boolean;
  dryRun: boolean;
  period: number;
  items: string[];
  gates: Record<string, boolean>;
  mode?: string;
}

const flags: FlagSet<Example>["flags"] = [
  { name: "name", kind: "string", field: "name", help: "A name." },
  { name: "count", kind: { min: 1, max: 10 }, field: "count", help: "How many." },
  { name: "verbose", kind: "bool", field: "verbose", help: "Say more." },
  { name: "dry-run", kind: "bool", field: "dryRun", help: "Change nothing." },
  { name: "period", kind: "duration", field: "period", help: "How often." },
  { name: "items", kind: "list", field: "items", help: "Some items." },
  { name: "gates", kind: "bool-map", field: "gates", help: "Gates." },
  {
    name: "mode",
    kind: "string",
    bare: "on",
    field: "mode",
    help: "A mode.",
    check: (mode) => (["on", "off"].includes(mode) ? undefined : "want on or off"),
  },
  { name: "ignored", kind: { min: 0, max: 5, decimal: true }, help: "Accepted, stored nowhere." },
];
const defaults: Example = {
  name: "",
  count: 1,
  verbose: false,
  dryRun: false,
  period: 0,
  items: [],
  gates: {},
};
const pflag: FlagSet<Example> = { dialect: "pflag", flags, defaults };
const goFlag: FlagSet<Example> = { dialect: "go", flags, defaults, plainBools: true };

const fails = (set: FlagSet<Example>, argv: string[], message: string) =>
  assert.throws(
    () => parseFlags(set, argv),
    (e: unknown) => e instanceof FlagError && e.message === message,
    argv.join(" "),
  );

describe("parseFlags, pflag dialect", () => {
  test("--name=value, --name value, one dash, bare bools and bare values; the last one given wins", () => {
    const { values, given, rest } = parseFlags(pflag, [
      "--name=a",
      "-count",
      "0x3",
      "--verbose",
      "--period=1m30s",
      "--items= x, y",
      "--gates=A=true,B=F",
      "--mode",
      "--name",
      "b",
    ]);
    assert.deepEqual(values, {
      name: "b",
      count: 3,
      verbose: true,
      dryRun: false,
      period: 90_000,
      items: ["x", "y"],
      gates: { A: true, B: false },
      mode: "on",
    });
    assert.deepEqual(given, ["name", "count", "verbose", "period", "items", "gates", "mode", "name"]);
    assert.deepEqual(rest, []);
    assert.equal(parseFlags(pflag, ["--verbose=T"]).values.verbose, true);
  });

  test("an absent optional field stays absent, and an unstored flag is only checked and named", () => {
    const { values, given } = parseFlags(pflag, ["--ignored=5"]);
    assert.equal("mode" in values, false);
    assert.equal("ignored" in values, false);
    assert.deepEqual(given, ["ignored"]);
  });

  test("mistakes are one line naming the flag", () => {
    fails(pflag, ["stray"], 'unexpected argument "stray": this command takes flags only');
    fails(pflag, ["--bogus=1"], "unknown flag: --bogus");
    fails(pflag, ["-bogus"], "unknown flag: -bogus");
    fails(pflag, ["--name"], "flag needs an argument: --name");
    fails(pflag, ["--count=11"], 'invalid value "11" for flag --count: must be an integer from 1 to 10');
    fails(pflag, ["--verbose=yes"], 'invalid value "yes" for flag --verbose: want true or false');
    fails(
      pflag,
      ["--period=soon"],
      'invalid value "soon" for flag --period: want a duration such as 500ms or 1s',
    );
    fails(pflag, ["--mode=up"], 'invalid value "up" for flag --mode: want on or off');
    fails(pflag, ["--ignored=+1"], 'invalid value "+1" for flag --ignored: must be an integer from 0 to 5');
    fails(
      pflag,
      ["--count=0", "--bogus"],
      'invalid value "0" for flag --count: must be an integer from 1 to 10',
    );
  });

  test("underscoreAsDash reads _ as -, and names the flag by its own name", () => {
    const set = { ...pflag, underscoreAsDash: true };
    assert.equal(parseFlags(set, ["--dry_run"]).values.dryRun, true);
    fails(set, ["-no_such"], "unknown flag: --no-such");
    fails(pflag, ["--dry_run"], 'unexpected argument "--dry_run": this command takes flags only');
  });

  test("an unknown flag names the close ones, help included, in the dialect's dashes", () => {
    fails(pflag, ["--verbos"], "unknown flag: --verbos; did you mean --verbose?");
    fails(pflag, ["--dry"], "unknown flag: --dry; did you mean --dry-run?");
    fails(pflag, ["--hlep"], "unknown flag: --hlep; did you mean --help?");
    fails(goFlag, ["-nam", "x"], "flag provided but not defined: -nam; did you mean -name?");
    fails(
      { ...pflag, underscoreAsDash: true },
      ["--dry_rn"],
      "unknown flag: --dry-rn; did you mean --dry-run?",
    );
  });

  test("a shorthand is taken with one dash only, as pflag takes cobra's -h", () => {
    const set: FlagSet<Example> = {
      ...pflag,
      flags: [...flags, { name: "help", kind: "bool", shorthand: "h", help: "Help." }],
    };
    assert.deepEqual(parseFlags(set, ["-h"]).given, ["help"]);
    assert.deepEqual(parseFlags(set, ["--help"]).given, ["help"]);
    fails(set, ["--h"], "unknown flag: --h; did you mean --help?");
    fails({ ...set, dialect: "go" }, ["-h"], "flag provided but not defined: -h; did you mean -help?");
  });
});

describe("parseFlags, Go flag dialect", () => {
  test("the flags end at -- or at the first argument that is not one", () => {
    assert.deepEqual(parseFlags(goFlag, ["-verbose", "file", "-name", "x"]).rest, ["file", "-name", "x"]);
    assert.deepEqual(parseFlags(goFlag, ["--", "-verbose"]).rest, ["-verbose"]);
    assert.deepEqual(parseFlags(goFlag, ["-"]).rest, ["-"]);
  });

  test("mistakes are worded as Go's flag package words them", () => {
    fails(goFlag, ["-bogus"], "flag provided but not defined: -bogus");
    fails(goFlag, ["-name"], "flag needs an argument: -name");
    fails(goFlag, ["-verbose=T"], 'invalid boolean value "T" for -verbose');
    fails(goFlag, ["-count=x"], 'invalid value "x" for flag -count: must be an integer from 1 to 10');
  });
});

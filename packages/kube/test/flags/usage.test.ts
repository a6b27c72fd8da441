import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type FlagSet, parseHostPort, usage } from "../../src/flags/index.js";

interface Example {
  port: number;
  quiet: boolean;
  gates: Record<string, boolean>;
  conf?: string;
}

const flags: FlagSet<Example>["flags"] = [
  { name: "quiet", kind: "bool", field: "quiet", help: "Say less." },
  {
    name: "port",
    kind: { type: "string", read: Number, invalid: "not a port" },
    field: "port",
    help: "A port.",
  },
  { name: "gates", kind: "bool-map", field: "gates", help: "Gates." },
  { name: "conf", kind: "string", bare: "x", field: "conf", help: "A file." },
];
const defaults: Example = { port: 53, quiet: false, gates: {} };

describe("usage", () => {
  test("pflag's: declaration order, the type after the name, help indented below", () => {
    assert.equal(
      usage({ dialect: "pflag", flags, defaults }, "prog"),
      "Usage: prog [flags]\n\n  --quiet\n      Say less.\n  --port string\n      A port.\n" +
        "  --gates key=bool,...\n      Gates.\n  --conf\n      A file.\n",
    );
  });

  test("pflag's shorthand before the name", () => {
    const withHelp = [...flags, { name: "help", kind: "bool" as const, shorthand: "h", help: "Help." }];
    assert.match(
      usage({ dialect: "pflag", flags: withHelp, defaults }, "prog"),
      /\n {2}-h, --help\n {6}Help\.\n$/,
    );
  });

  test("Go's PrintDefaults: sorted by name, help after a tab", () => {
    assert.equal(
      usage({ dialect: "go", flags, defaults }, "prog"),
      "Usage of prog:\n  -conf\n    \tA file.\n  -gates key=bool,...\n    \tGates.\n" +
        "  -port string\n    \tA port.\n  -quiet\n    \tSay less.\n",
    );
  });
});

test("parseHostPort", () => {
  assert.deepEqual(parseHostPort("127.0.0.1:10249"), { host: "127.0.0.1", port: 10249 });
  assert.deepEqual(parseHostPort("[::1]:80"), { host: "::1", port: 80 });
  assert.deepEqual(parseHostPort(":80"), { host: "", port: 80 });
  assert.equal(parseHostPort("host:99999"), undefined);
  assert.equal(parseHostPort("10.0.0.1"), undefined);
});

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { differentialSkip, type Pair, type Server, startPair } from "../src/testing/differential.js";
import { compareSetupErrors } from "./helpers/setup-errors.js";

// The errors plugin, compared with CoreDNS's binary: the lines it logs for the same failing queries (a template
// that fails to run gives the same Go error text in both), each pattern's `consolidate` summary, and the setup
// errors for the same malformed blocks.
const skip = differentialSkip();

const corefile = `.:{{PORT}} {
    errors {
        consolidate 1s "^template: .*<index .Match 3>" warning
        consolidate 1s "^template: .*<index .Match 4>" info show_first
    }
    template IN A fail.test {
        match ^one[.]
        answer "{{ .Name }} 60 IN A {{ index .Match 9 }}"
        fallthrough
    }
    template IN A fail.test {
        match ^three[.]
        answer "{{ .Name }} 60 IN A {{ index .Match 3 }}"
        fallthrough
    }
    template IN A fail.test {
        match ^four[.]
        answer "{{ .Name }} 60 IN A {{ index .Match 4 }}"
    }
}
`;

/** The errors plugin's lines a server has logged so far, in order (not the harness's start-up probe's). */
const errorLines = (s: Server) =>
  s
    .output()
    .split("\n")
    .filter((l) => l.includes("plugin/errors: ") && !l.includes("startup.probe."));

describe("errors, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(corefile);
  });
  after(() => pair?.stop());

  test("unmatched errors are logged one by one; consolidated ones once per period at their level", async () => {
    await pair.dig("one.fail.test", "A");
    for (let i = 0; i < 3; i++) await pair.dig("three.fail.test", "A");
    for (let i = 0; i < 2; i++) await pair.dig("four.fail.test", "A");
    for (const s of [pair.ours, pair.coredns])
      await eventually(
        `${s.name}'s two summaries\n${s.output()}`,
        () => errorLines(s).filter((l) => l.includes("occurred in last")).length === 2,
        { timeoutMs: 10_000 },
      );
    const ours = errorLines(pair.ours);
    const theirs = errorLines(pair.coredns);
    // The summaries come from two timers that end together; their order is not the test's business.
    assert.deepEqual([...ours].sort(), [...theirs].sort());
    assert.equal(theirs.length, 4, theirs.join("\n"));
    assert.ok(
      theirs.some((l) => /^\[WARNING\] plugin\/errors: 3 errors like '.*' occurred in last 1s$/.test(l)),
    );
  });
});

describe("errors setup, against CoreDNS v1.14.7", { skip }, () => {
  const block = (body: string) => `.:{{PORT}} {\n    whoami\n${body}\n}\n`;
  compareSetupErrors([
    [
      block("    errors /var/log/dns.log"),
      /^plugin\/errors: Corefile:3 - Error during parsing: invalid log file/,
    ],
    [block("    errors stdout extra"), /Wrong argument count or unexpected line ending after 'extra'$/],
    [block("    errors {\n        verbose\n    }"), /Syntax error: Unexpected token 'verbose'/],
    [block("    errors {\n        stacktrace now\n    }"), /Syntax error: Unexpected token 'now'/],
    [block("    errors {\n        consolidate 5s\n    }"), /Wrong argument count/],
    [block("    errors {\n        consolidate 5 x\n    }"), /missing unit in duration "5"$/],
    [block("    errors {\n        consolidate 5d x\n    }"), /unknown unit "d" in duration "5d"$/],
    [block("    errors {\n        consolidate 5s ())\n    }"), /error parsing regexp: unexpected \)/],
    [block("    errors {\n        consolidate 5s (?=x)\n    }"), /invalid or unsupported Perl syntax/],
    [block("    errors {\n        consolidate 5s x loud\n    }"), /unknown option in consolidate: loud$/],
    [block("    errors {\n        consolidate 5s x show_first info\n    }"), /log level must come before/],
    [block("    errors {\n        consolidate 5s x info debug\n    }"), /multiple log levels/],
    [block("    errors\n    errors"), /^plugin\/errors: this plugin can only be used once per Server Block$/],
    [
      block("    errors {\n        stacktrace\n        consolidate 1m ^x$ warning show_first\n    }"),
      /^\(started\)$/,
    ],
  ]);
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseZoneAddress } from "../../src/corefile/address.js";
import { CorefileError } from "../../src/corefile/errors.js";
import { parseCorefile } from "../../src/corefile/parse.js";
import { STOCK_COREFILE } from "../helpers/stock-corefile.js";

function parseError(text: string): string {
  try {
    parseCorefile(text, { env: {} });
  } catch (err) {
    assert.ok(err instanceof CorefileError, String(err));
    return err.message;
  }
  assert.fail("expected a parse error");
}

describe("parseCorefile", () => {
  test("the stock kubeadm/EKS Corefile", () => {
    const [block, ...rest] = parseCorefile(STOCK_COREFILE, { env: {} });
    assert.equal(rest.length, 0);
    assert.deepEqual(block?.keys, [".:53"]);
    assert.deepEqual(
      block?.stanzas.map((s) => [s.name, ...s.args].join(" ")),
      [
        "errors",
        "health",
        "ready",
        "kubernetes cluster.local in-addr.arpa ip6.arpa",
        "prometheus :9153",
        "forward . /etc/resolv.conf",
        "cache 30",
        "loop",
        "reload",
        "loadbalance",
      ],
    );
    const kube = block?.stanzas[3];
    assert.deepEqual(
      kube?.block.map((s) => [s.name, ...s.args].join(" ")),
      ["pods insecure", "fallthrough in-addr.arpa ip6.arpa", "ttl 30"],
    );
    assert.equal(kube?.line, 7);
    assert.equal(kube?.block[2]?.line, 10);
    assert.deepEqual(block?.stanzas[1]?.block[0], {
      name: "lameduck",
      args: ["5s"],
      block: [],
      file: "Corefile",
      line: 4,
    });
  });

  test("several blocks, several keys per block, comments and quotes", () => {
    const blocks = parseCorefile(
      `# leading comment
example.org:1053 example.net {  # trailing comment
  whoami
  log "{remote} # not a comment" second
}
cluster.local,in-addr.arpa {
  kubernetes
}
`,
      { env: {} },
    );
    assert.deepEqual(
      blocks.map((b) => b.keys),
      [
        ["example.org:1053", "example.net"],
        ["cluster.local", "in-addr.arpa"],
      ],
    );
    assert.deepEqual(blocks[0]?.stanzas[1]?.args, ["{remote} # not a comment", "second"]);
  });

  test("environment substitution, with defaults", () => {
    const [block] = parseCorefile(".:{$PORT} {\n  forward . {$UPSTREAM} {$MISSING:8.8.8.8}\n}\n", {
      env: { PORT: "1053", UPSTREAM: "10.0.0.1" },
    });
    assert.deepEqual(block?.keys, [".:1053"]);
    assert.deepEqual(block?.stanzas[0]?.args, [".", "10.0.0.1", "8.8.8.8"]);
  });

  test("import of snippets and files", () => {
    const files: Record<string, string> = { "common.conf": "errors\nloadbalance\n" };
    const [block] = parseCorefile(
      "(basics) {\n  log\n}\n.:53 {\n  import basics\n  import common.conf\n}\n",
      {
        env: {},
        readFile: (p) => {
          const text = files[p];
          if (text === undefined) throw new Error("no such file");
          return text;
        },
      },
    );
    assert.deepEqual(
      block?.stanzas.map((s) => s.name),
      ["log", "errors", "loadbalance"],
    );
    assert.match(
      parseError(".:53 {\n  import nothing\n}\n"),
      /^Corefile:2 - Error during parsing: import nothing/,
    );
  });

  test("a block keeps the line of its closing brace, so an empty {} still shows", () => {
    const [block] = parseCorefile(".:53 {\n  any {\n  }\n  whoami { }\n  log\n  cache {}\n}\n", { env: {} });
    const [any, whoami, log, cache] = block?.stanzas ?? [];
    assert.deepEqual([any?.block, any?.blockEnd], [[], 3]);
    assert.deepEqual([whoami?.args, whoami?.blockEnd], [[], 4]);
    assert.equal(log?.blockEnd, undefined);
    // `{}` in one word is no brace to caddy either: an argument.
    assert.deepEqual([cache?.args, cache?.blockEnd], [["{}"], undefined]);
  });

  test("errors name the file and line", () => {
    assert.equal(
      parseError(".:53 {\n  errors\n  kubernetes {\n    ttl 30\n"),
      "Corefile:4 - Error during parsing: Unexpected EOF",
    );
    // As caddy counts braces: a server block whose last token is a `}` is closed, else a `}` was expected.
    assert.equal(
      parseError(".:53 {\n  errors\n"),
      "Corefile:2 - Syntax error: Unexpected token 'errors', expecting '}'",
    );
    assert.equal(
      parseCorefile(".:53 {\n  hosts {\n    192.0.2.1 a.test\n  whoami\n}\n", { env: {} })[0]?.stanzas.length,
      1,
    );
    assert.equal(parseError(".:53 {\n  errors\n}\n}\n"), "Corefile:4 - Error during parsing: unexpected '}'");
    assert.equal(
      parseError('.:53 {\n  log "open\n}\n'),
      "Corefile:2 - Error during parsing: unterminated quoted string",
    );
    assert.equal(parseError(""), "Corefile:1 - Error during parsing: no server blocks");
    assert.match(parseError(".:53 {\n  errors { } x\n}\n"), /^Corefile:2 - /);
  });
});

describe("parseZoneAddress", () => {
  test("zone, port and scheme", () => {
    assert.deepEqual(parseZoneAddress(".:53", 53, "Corefile", 1), { zone: ".", port: 53, scheme: "dns" });
    assert.deepEqual(parseZoneAddress("Cluster.Local", 53, "Corefile", 1), {
      zone: "cluster.local.",
      port: 53,
      scheme: "dns",
    });
    assert.deepEqual(parseZoneAddress("dns://example.org:1053", 53, "Corefile", 1), {
      zone: "example.org.",
      port: 1053,
      scheme: "dns",
    });
  });

  test("bad keys are clear errors", () => {
    assert.throws(
      () => parseZoneAddress("tls://example.org", 53, "Corefile", 3),
      /Corefile:3 - .*tls:\/\/ servers are not supported/,
    );
    assert.throws(() => parseZoneAddress("example.org:99999", 53, "Corefile", 3), /invalid port "99999"/);
    assert.throws(() => parseZoneAddress("10.0.0.0/8", 53, "Corefile", 3), /CIDR/);
  });
});

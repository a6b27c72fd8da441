import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { parseLog } from "../../src/plugins/log/log.js";
import { Resolver } from "../../src/resolver.js";
import { dig } from "../helpers/clients.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

function rules(text: string) {
  const block = parseCorefile(`.:53 {\n${text}\n}\n`, { env: {} })[0];
  return parseLog(block?.stanzas ?? []);
}

describe("log: parsing", () => {
  test("no arguments logs everything in the common format", () => {
    const [rule] = rules("log");
    assert.equal(rule?.scope, ".");
    assert.deepEqual([...(rule?.classes ?? [])], ["all"]);
    assert.match(rule?.format ?? "", /^\{remote\}:\{port\} - \{>id\} "\{type\}/);
  });

  test("names with a format, {combined} expanded, classes shared by every name", () => {
    const parsed = rules('log example.org cluster.local "{combined} x" {\n class denial error\n}');
    assert.deepEqual(
      parsed.map((r) => r.scope),
      ["example.org.", "cluster.local."],
    );
    assert.match(parsed[0]?.format ?? "", /\{rsize\} \{duration\} "\{>opcode\}" x$/);
    assert.deepEqual([...(parsed[1]?.classes ?? [])], ["denial", "error"]);
  });

  test("a single argument is a name even with a brace", () => {
    assert.equal(rules("log {type}")[0]?.scope, "{type}.");
  });

  test("errors name the line", () => {
    assert.throws(
      () => rules("log {\n class sometimes\n}"),
      /^PluginError: plugin\/log: invalid Class: sometimes$/,
    );
    assert.throws(
      () => rules("log {\n colour red\n}"),
      /plugin\/log: Corefile:3 - .*unknown property 'colour'/,
    );
    assert.throws(() => rules("log {\n class\n}"), /plugin\/log: Corefile:3 - .*Wrong argument count/);
  });
});

describe("log: lines for real queries", () => {
  const lines: string[] = [];
  const resolver = Resolver.fromCorefile(
    `cluster.local {
    log . "{type} {name} {rcode} {>rflags} {rsize} {>bufsize} {>do} {proto} {/meta} {>ID}" {
        class denial error
    }
    log
    kubernetes
}
other.test {
    log
}
`,
    {
      env: {},
      deps: { cluster: fixtureCluster(), log: (l) => lines.push(l), monotonic: () => 0 },
      address: "127.0.0.1",
      portOverride: 0,
    },
  );
  let port = 0;
  before(async () => {
    await resolver.start();
    port = resolver.servers[0]?.address.port ?? 0;
  });
  after(() => resolver.stop());

  test("the common format, as CoreDNS writes it", async () => {
    lines.length = 0;
    await dig(port, "other.test", "A", "+edns=0", "+bufsize=1232", "+dnssec", "+nocookie");
    assert.equal(lines.length, 1);
    assert.match(
      lines[0] ?? "",
      /^\[INFO\] 127\.0\.0\.1:\d+ - \d+ "A IN other\.test\. udp 39 true 1232" SERVFAIL qr,rd \d+ 0s$/,
    );
  });

  test("the first matching rule decides; classes filter what it logs", async () => {
    lines.length = 0;
    await dig(port, "svc1.testns.svc.cluster.local", "A", "+tcp");
    assert.deepEqual(lines, [], "a success is not in 'denial error', and the second rule is never reached");
    await dig(port, "nosvc.testns.svc.cluster.local", "A", "+tcp", "+norec", "+noedns");
    assert.equal(lines.length, 1);
    assert.match(
      lines[0] ?? "",
      /^\[INFO\] A nosvc\.testns\.svc\.cluster\.local\. NXDOMAIN qr,aa \d+ 65535 false tcp - \d+$/,
    );
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, Peer, ResponseWriter, Result } from "../../src/plugin/handler.js";
import type { Setup } from "../../src/plugin/setup.js";
import { RewriteHandler } from "../../src/plugins/rewrite/rewrite.js";
import { parseRewrite } from "../../src/plugins/rewrite/setup.js";
import { defaultRegistry } from "../../src/registry.js";
import { dispatch } from "../../src/server/dispatch.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Edns, EdnsOption, Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";

const v4: Peer = { address: "192.0.2.77", port: 5353, family: "IPv4" };
const v6: Peer = { address: "2001:db8::1234:5678", port: 5353, family: "IPv6" };
const withEdns = (options: EdnsOption[] = []): Edns => ({
  udpSize: 1232,
  version: 0,
  dnssecOk: false,
  options,
});
const opt = (code: number, data: string | Buffer): EdnsOption => ({
  code,
  data: typeof data === "string" ? Buffer.from(data) : data,
});

function rules(body: string) {
  const [block] = parseCorefile(`.:53 {\n${body}\n}\n`, { env: {} });
  assert.ok(block);
  return parseRewrite(block.stanzas.filter((s) => s.name === "rewrite"));
}

/** A backend that records what it was asked and answers with one A record and no OPT of its own. */
function recorder(seen: Message[]): Handler {
  return {
    name: "backend",
    async serveDNS(_c, w, r): Promise<Result> {
      seen.push(structuredClone(r));
      const reply = replyTo(r);
      reply.answer = [{ name: r.question[0]?.name ?? ".", type: "A", class: 1, ttl: 60, data: "192.0.2.1" }];
      w.write(reply);
      return { rcode: 0 };
    },
  };
}

/** The options the backend saw after the rules ran on a query carrying `edns` (none when undefined). */
async function optionsSeen(body: string, edns?: Edns, peer = v4, transport: "udp" | "tcp" = "udp") {
  const seen: Message[] = [];
  const handler = new RewriteHandler(recorder(seen), rules(body));
  const w: ResponseWriter = { transport, remote: peer, write: () => {} };
  await handler.serveDNS({ zone: ".", server: "dns://:1053" }, w, newQuery("Www.Example.org.", 28, 0, edns));
  return seen[0]?.edns;
}

/** structuredClone turns Buffers into plain Uint8Arrays, so the bytes are wrapped again. */
const hex = (o: EdnsOption | undefined) => o && `${o.code}:${Buffer.from(o.data).toString("hex")}`;

describe("rewrite edns0 local", () => {
  test("set adds the option, making an OPT of 4096 bytes when the client sent none", async () => {
    const edns = await optionsSeen("rewrite edns0 local set 0xffee abc");
    assert.deepEqual(edns && { ...edns, options: edns.options.map(hex) }, {
      udpSize: 4096,
      version: 0,
      dnssecOk: false,
      options: ["65518:616263"],
    });
  });

  test("set and replace change an option already there; replace alone adds nothing", async () => {
    const sent = withEdns([opt(0xffee, "old"), opt(10, "cookie")]);
    const set = await optionsSeen("rewrite edns0 local set 0xffee 0x0102", structuredClone(sent));
    assert.deepEqual(set?.options.map(hex), ["65518:0102", `10:${Buffer.from("cookie").toString("hex")}`]);
    const replaced = await optionsSeen("rewrite edns0 local replace 65518 new", structuredClone(sent));
    assert.deepEqual(replaced?.options.map(hex)[0], `65518:${Buffer.from("new").toString("hex")}`);
    assert.deepEqual((await optionsSeen("rewrite edns0 local replace 0xffee new"))?.options, []);
  });

  test("append adds a second option with the same code, as upstream does", async () => {
    const edns = await optionsSeen("rewrite edns0 local append 0xffee b", withEdns([opt(0xffee, "a")]));
    assert.deepEqual(edns?.options.map(hex), ["65518:61", "65518:62"]);
  });

  test("codes miekg reads as typed options are never replaced by a local rule", async () => {
    const edns = await optionsSeen("rewrite edns0 local set 8 0x00", withEdns([opt(8, "ecs")]));
    assert.deepEqual(edns?.options.map(hex), ["8:656373", "8:00"]);
  });

  test("unset removes every option with the code", async () => {
    const sent = withEdns([opt(0xffee, "a"), opt(3, ""), opt(0xffee, "b")]);
    assert.deepEqual((await optionsSeen("rewrite edns0 local unset 0xffee", sent))?.options.map(hex), ["3:"]);
  });

  test("variables: name as asked, type, client address and port, protocol, server port", async () => {
    const value = async (variable: string, peer = v4, transport: "udp" | "tcp" = "udp") =>
      hex(
        (await optionsSeen(`rewrite edns0 local set 0xffee ${variable}`, undefined, peer, transport))
          ?.options[0],
      );
    assert.equal(await value("{qname}"), `65518:${Buffer.from("Www.Example.org.").toString("hex")}`);
    assert.equal(await value("{qtype}"), "65518:001c");
    assert.equal(await value("{client_ip}"), "65518:c000024d");
    assert.equal(await value("{client_ip}", v6), "65518:20010db8000000000000000012345678");
    assert.equal(
      await value("{client_ip}", { address: "::ffff:192.0.2.9", port: 1, family: "IPv6" }),
      "65518:c0000209",
    );
    assert.equal(await value("{client_port}"), "65518:14e9");
    assert.equal(await value("{protocol}", v4, "tcp"), "65518:746370");
    assert.equal(await value("{server_port}"), "65518:041d");
  });

  test("a metadata variable has no value here, so the request is left alone (no OPT added)", async () => {
    assert.equal(await optionsSeen("rewrite edns0 local set 0xffee {test/label}"), undefined);
  });

  test("a variable rule does not append next to an option already there", async () => {
    const edns = await optionsSeen(
      "rewrite edns0 local append 0xffee {protocol}",
      withEdns([opt(0xffee, "a")]),
    );
    assert.deepEqual(edns?.options.map(hex), ["65518:61"]);
  });
});

describe("rewrite edns0 nsid and subnet", () => {
  test("nsid set adds an empty NSID, and empties one the client sent", async () => {
    assert.deepEqual((await optionsSeen("rewrite edns0 nsid set"))?.options.map(hex), ["3:"]);
    const edns = await optionsSeen("rewrite edns0 nsid replace", withEdns([opt(3, "x")]));
    assert.deepEqual(edns?.options.map(hex), ["3:"]);
  });

  test("subnet carries the client's address cut to the prefix", async () => {
    const four = await optionsSeen("rewrite edns0 subnet set 20 56");
    assert.deepEqual(four?.options.map(hex), ["8:00011400c00000"]);
    const six = await optionsSeen("rewrite edns0 subnet set 24 56", undefined, v6);
    assert.deepEqual(six?.options.map(hex), ["8:0002380020010db8000000"]);
    const none = await optionsSeen("rewrite edns0 subnet set 0 0");
    assert.deepEqual(none?.options.map(hex), ["8:00010000"]);
  });

  test("subnet replace overwrites the client's; append leaves it", async () => {
    const sent = withEdns([opt(8, Buffer.from("0001180001020300", "hex"))]);
    const replaced = await optionsSeen("rewrite edns0 subnet replace 8 56", structuredClone(sent));
    assert.deepEqual(replaced?.options.map(hex), ["8:00010800c0"]);
    const appended = await optionsSeen("rewrite edns0 subnet append 8 56", structuredClone(sent));
    assert.deepEqual(appended?.options.map(hex), ["8:0001180001020300"]);
  });
});

describe("rewrite edns0 through the server", () => {
  /** Sends one query through `rewrite` (the given lines) and whoami, as the server would; the reply's OPT. */
  async function replyOptions(body: string, edns?: Edns): Promise<Edns | undefined> {
    const registry = new Map<string, Setup>(
      ["rewrite", "whoami"].map((n) => [n, defaultRegistry().get(n) as Setup]),
    );
    const built = buildConfig(parseCorefile(`.:53 {\n${body}\n whoami\n}\n`, { env: {} }), {
      registry,
      deps: {},
    });
    const sites = built.servers[0]?.sites ?? [];
    const packet = encodeMessage(newQuery("a.example.org.", 1, 7, edns));
    const out = await dispatch(packet, { sites, server: "dns://:53", transport: "udp", remote: v4 });
    const reply = decodeMessage(out.reply as Buffer);
    assert.equal(reply.kind, "message");
    return reply.kind === "message" ? reply.message.edns : undefined;
  }

  test("a local code is echoed back to the client, as upstream registers it as supported", async () => {
    const edns = await replyOptions(" rewrite edns0 local set 0xfeed abc");
    assert.deepEqual(edns?.options.map(hex), ["65261:616263"]);
    assert.equal(edns?.udpSize, 4096);
  });

  test("with revert, the client is echoed only what it sent", async () => {
    const added = await replyOptions(" rewrite edns0 local set 0xfeef abc revert");
    assert.deepEqual(added?.options, []);
    const replaced = await replyOptions(" rewrite edns0 nsid set revert", withEdns([opt(3, "mine")]));
    assert.deepEqual(replaced?.options.map(hex), ["3:6d696e65"]);
    const plain = await replyOptions(" rewrite edns0 nsid set", withEdns([opt(3, "mine")]));
    assert.deepEqual(plain?.options.map(hex), ["3:"]);
  });

  test("edns0 rules stop the list unless they say continue", async () => {
    const stopped = await replyOptions(
      " rewrite edns0 local set 0xfee0 a\n rewrite edns0 local set 0xfee1 b",
    );
    assert.deepEqual(stopped?.options.map(hex), ["65248:61"]);
    const both = await replyOptions(
      " rewrite continue edns0 local set 0xfee0 a\n rewrite edns0 local set 0xfee1 b",
    );
    assert.deepEqual(both?.options.map(hex), ["65248:61", "65249:62"]);
  });
});

describe("rewrite edns0 setup errors", () => {
  const cases: [string, string][] = [
    ["rewrite edns0 local", "too few arguments for an EDNS0 rule"],
    ["rewrite edns0 local bogus", 'invalid action: "bogus"'],
    ["rewrite edns0 bogus set", 'invalid rule type "bogus"'],
    ["rewrite edns0 bogus unset", 'invalid rule type "bogus"'],
    ["rewrite edns0 local unset", "local unset action requires exactly two arguments"],
    ["rewrite edns0 local unset 0xfffff", 'strconv.ParseUint: parsing "0xfffff": value out of range'],
    ["rewrite edns0 nsid unset x", "nsid unset action requires exactly one argument"],
    ["rewrite edns0 subnet unset x", "subnet unset action requires exactly one argument"],
    ["rewrite edns0 local set 0xffee", "EDNS0 local rules require three or four args"],
    ["rewrite edns0 local set 0xffee 0xabc", "encoding/hex: odd length hex string"],
    ["rewrite edns0 local set 0xffee 0xzz", "encoding/hex: invalid byte: U+007A 'z'"],
    ["rewrite edns0 local set 0xffee 0xag", "encoding/hex: invalid byte: U+0067 'g'"],
    ["rewrite edns0 local set 0xffee 0xabg", "encoding/hex: invalid byte: U+0067 'g'"],
    ["rewrite edns0 local set 0xffee {bogus}", 'unsupported variable name "{bogus}"'],
    [
      "rewrite edns0 local set 0xffee {server_ip}",
      "variable {server_ip} is not supported by this build: the server address is unknown",
    ],
    ["rewrite edns0 local set zz abc", 'strconv.ParseUint: parsing "zz": invalid syntax'],
    ["rewrite edns0 nsid set x", "EDNS0 NSID rules can accept no more than one arg"],
    ["rewrite edns0 subnet set 24", "EDNS0 subnet rules require three or four args"],
    ["rewrite edns0 subnet set 33 56", "invalid IPv4 bit mask length 33"],
    ["rewrite edns0 subnet set 24 129", "invalid IPv6 bit mask length 129"],
    ["rewrite edns0 subnet set x 56", 'strconv.ParseUint: parsing "x": invalid syntax'],
  ];
  for (const [line, message] of cases) {
    test(line, () => {
      assert.throws(
        () => rules(`whoami\n${line}`),
        (err: Error) => err.message === `plugin/rewrite: ${message}`,
      );
    });
  }

  test("accepted as upstream accepts them", () => {
    for (const line of [
      "rewrite edns0 nsid set revert",
      "rewrite continue edns0 local set 0xffee abc revert",
      "rewrite stop edns0 local SET 0xffee {a/b}",
      "rewrite edns0 subnet set 0x18 0o70",
      "rewrite stop {\n edns0 local set 0xffee abc\n}",
    ]) {
      assert.doesNotThrow(() => rules(line), line);
    }
  });
});

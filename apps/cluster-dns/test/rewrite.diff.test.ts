// Differential test of the rewrite plugin: our server and CoreDNS run one Corefile in which every zone holds
// one rewrite scenario, all forwarding to the same small static upstream started here.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import type { Message, ResourceRecord } from "@switchyard/resolver";
import { decodeMessage, encodeMessage, parseRecord, replyTo } from "@switchyard/resolver";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";

/**
 * Answers every name: `nx.*` is NXDOMAIN, `cname.<rest>` is a CNAME to `target.<rest>` plus its address,
 * anything else gets an A (TTL 300) for A queries and no records for other types. Replies carry no OPT, so
 * both servers add their own. It serves TCP on the same port too: our server resolves a `cname` rule's new
 * target over TCP (the resolver's in-process queries are TCP), where CoreDNS keeps the client's UDP.
 */
async function staticUpstream(): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (packet, rinfo) => {
    const reply = replyFor(packet);
    if (reply) sock.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  const port = sock.address().port;
  const tcp = net.createServer((conn) => {
    let pending = Buffer.alloc(0);
    conn.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const reply = replyFor(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
        if (reply) conn.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 0xff]), reply]));
      }
    });
    conn.on("error", () => {});
  });
  await new Promise<void>((r) => tcp.listen(port, "127.0.0.1", r));
  return {
    port,
    close: () => {
      sock.close();
      tcp.close();
    },
  };
}

function replyFor(packet: Buffer): Buffer | undefined {
  const decoded = decodeMessage(packet);
  if (decoded.kind !== "message") return undefined;
  const query = decoded.message;
  const q = query.question[0];
  if (!q) return undefined;
  const reply: Message = { ...replyTo(query), ra: true };
  const name = q.name.toLowerCase();
  if (name.startsWith("nx.")) reply.rcode = 3;
  // Another class gets a TXT in that class (which dig can print), so a class rewrite shows in the answer.
  else if (q.class !== 1)
    reply.answer = [{ ...parseRecord(`${q.name} 300 IN TXT "class ${q.class}"`), class: q.class }];
  else reply.answer = answersFor(q.name, q.type);
  return encodeMessage(reply);
}

function answersFor(name: string, type: number): ResourceRecord[] {
  if (name.toLowerCase().startsWith("cname.")) {
    const target = `target.${name.slice("cname.".length)}`;
    const out = [parseRecord(`${name} 300 IN CNAME ${target}`)];
    if (type === 1) out.push(parseRecord(`${target} 300 IN A 192.0.2.2`));
    return out;
  }
  return type === 1 ? [parseRecord(`${name} 300 IN A 192.0.2.1`)] : [];
}

const corefile = (up: number) => `
exact.test:{{PORT}} {
  rewrite name exact www.exact.test. www.backend.test.
  forward . 127.0.0.1:${up}
}
prefix.test:{{PORT}} {
  rewrite name prefix www. api. answer auto
  forward . 127.0.0.1:${up}
}
noauto.test:{{PORT}} {
  rewrite name prefix www. api.
  forward . 127.0.0.1:${up}
}
suffix.test:{{PORT}} {
  rewrite name suffix .suffix.test. .backend.test. answer auto
  forward . 127.0.0.1:${up}
}
substring.test:{{PORT}} {
  rewrite name substring sub.substring.test alt.backend.test answer auto
  forward . 127.0.0.1:${up}
}
regex.test:{{PORT}} {
  rewrite name regex (.*)-(blue)\\.regex\\.test {1}.{2}.backend.test answer auto
  forward . 127.0.0.1:${up}
}
redos.test:{{PORT}} {
  rewrite name regex (a+)+b\\.redos\\.test {1}.backend.test answer auto
  forward . 127.0.0.1:${up}
}
explicit.test:{{PORT}} {
  rewrite stop {
    name regex (.*)-(blue)\\.explicit\\.test {1}.{2}.backend.test
    answer name (.*)\\.(blue)\\.backend\\.test {1}-{2}.explicit.test
    answer value target\\.(.*)\\.backend\\.test other.{1}.explicit.test
  }
  forward . 127.0.0.1:${up}
}
type.test:{{PORT}} {
  rewrite type AAAA A
  forward . 127.0.0.1:${up}
}
class.test:{{PORT}} {
  rewrite class IN CH
  forward . 127.0.0.1:${up}
}
class-stop.test:{{PORT}} {
  rewrite continue class IN CH
  rewrite name suffix .class-stop.test .type.test answer auto
  forward . 127.0.0.1:${up}
}
class-in.test:{{PORT}} {
  rewrite class CH IN
  forward . 127.0.0.1:${up}
}
ttl.test:{{PORT}} {
  rewrite ttl regex .*\\.ttl\\.test 15
  rewrite ttl exact range.ttlrange.test 30-60
  forward . 127.0.0.1:${up}
}
ttlrange.test:{{PORT}} {
  rewrite ttl prefix low. 400-
  rewrite ttl substring mid -100
  forward . 127.0.0.1:${up}
}
continue.test:{{PORT}} {
  rewrite continue name suffix .continue.test. .backend.test. answer auto
  rewrite ttl suffix .backend.test. 20
  forward . 127.0.0.1:${up}
}
stop.test:{{PORT}} {
  rewrite name suffix .stop.test. .backend.test. answer auto
  rewrite ttl suffix .backend.test. 20
  forward . 127.0.0.1:${up}
}
rcode.test:{{PORT}} {
  rewrite rcode suffix .rcode.test. NXDOMAIN NOERROR
  forward . 127.0.0.1:${up}
}
invalid.test:{{PORT}} {
  rewrite name regex (.*)\\.invalid\\.test {1}..x
  forward . 127.0.0.1:${up}
}
edns-local.test:{{PORT}} {
  rewrite edns0 local set 0xffee abcd
  forward . 127.0.0.1:${up}
}
edns-hex.test:{{PORT}} {
  rewrite edns0 local append 65519 0xc0ffee
  forward . 127.0.0.1:${up}
}
edns-vars.test:{{PORT}} {
  rewrite continue edns0 local set 0xfff0 {qname}
  rewrite continue edns0 local set 0xfff1 {qtype}
  rewrite continue edns0 local set 0xfff2 {client_ip}
  rewrite edns0 local set 0xfff3 {protocol}
  forward . 127.0.0.1:${up}
}
edns-revert.test:{{PORT}} {
  rewrite edns0 local set 0xffe0 abcd revert
  forward . 127.0.0.1:${up}
}
edns-subnet.test:{{PORT}} {
  rewrite edns0 subnet set 24 56
  forward . 127.0.0.1:${up}
}
edns-subnet-replace.test:{{PORT}} {
  rewrite edns0 subnet replace 16 56
  forward . 127.0.0.1:${up}
}
ecs-echo.test:{{PORT}} {
  # Never queried: a local rule makes its code one the server echoes, in every block, as upstream's does.
  # Code 8 is ECS, so the subnet rules' option comes back in the replies above.
  rewrite edns0 local unset 8
  forward . 127.0.0.1:${up}
}
edns-nsid.test:{{PORT}} {
  rewrite edns0 nsid set
  forward . 127.0.0.1:{{FREE1}}
}
edns-nsid-revert.test:{{PORT}} {
  rewrite edns0 nsid set revert
  forward . 127.0.0.1:{{FREE1}}
}
edns-nsid-unset.test:{{PORT}} {
  rewrite edns0 nsid unset
  forward . 127.0.0.1:{{FREE1}}
}
cname-exact.test:{{PORT}} {
  rewrite cname exact target.x.cname-exact.test other.cname-exact.test
  forward . 127.0.0.1:${up}
}
cname-suffix.test:{{PORT}} {
  rewrite cname suffix .x.cname-suffix.test. .y.cname-suffix.test.
  forward . 127.0.0.1:${up}
}
cname-bare.test:{{PORT}} {
  rewrite cname suffix .x.cname-bare.test .y.cname-bare.test
  forward . 127.0.0.1:${up}
}
cname-regex.test:{{PORT}} {
  rewrite cname regex ^target\\.(.*)$ re.{1}
  forward . 127.0.0.1:${up}
}
.:{{FREE1}} {
  # The second server: it names itself to queries that ask, so the first one's nsid rules show.
  nsid backend
  forward . 127.0.0.1:${up}
}
`;

// `class` rules: a server with `forward` serves every class (CoreDNS's EnableChaos), so both directions act: the
// upstream gets the rewritten class and the client its own question back.
const skip = differentialSkip();

describe("rewrite, differential against CoreDNS", { skip }, () => {
  let upstream: { port: number; close(): void };
  let pair: Pair;

  before(async () => {
    upstream = await staticUpstream();
    pair = await startPair(corefile(upstream.port));
  });
  after(async () => {
    await pair?.stop();
    upstream?.close();
  });

  const cases: [string, string[]][] = [
    ["name exact", ["www.exact.test", "A"]],
    ["name exact, mixed case", ["WWW.Exact.TEST", "A"]],
    ["name exact, no match", ["other.exact.test", "A"]],
    ["name prefix, answer auto", ["www.prefix.test", "A"]],
    ["name prefix, without answer auto", ["www.noauto.test", "A"]],
    ["name suffix, answer auto", ["a.suffix.test", "A"]],
    ["name suffix, CNAME target reverted", ["cname.x.suffix.test", "A"]],
    ["name substring, answer auto", ["x.sub.substring.test", "A"]],
    ["name regex, answer auto", ["foo-blue.regex.test", "A"]],
    ["name regex, CNAME through auto", ["cname.foo-blue.regex.test", "A"]],
    ["name regex, explicit answer name and value", ["cname-blue.explicit.test", "A"]],
    ["type AAAA to A", ["a.type.test", "AAAA"]],
    ["type, other types untouched", ["a.type.test", "TXT"]],
    ["class IN to CH", ["a.class.test", "TXT"]],
    ["class IN to CH over TCP", ["+tcp", "a.class.test", "TXT"]],
    ["class with continue, then a name rule", ["a.class-stop.test", "TXT"]],
    ["class CH to IN", ["-c", "CH", "a.class-in.test", "A"]],
    ["class CH, no rule for it", ["-c", "CH", "a.type.test", "TXT"]],
    ["ttl regex", ["a.ttl.test", "A"]],
    ["ttl regex with CNAME", ["cname.ttl.test", "A"]],
    ["ttl range, inside the zone only rules that match", ["range.ttlrange.test", "A"]],
    ["ttl open-ended minimum", ["low.ttlrange.test", "A"]],
    ["ttl capped maximum", ["a.mid.ttlrange.test", "A"]],
    ["continue: the ttl rule sees the rewritten name", ["a.continue.test", "A"]],
    ["stop: the ttl rule is not reached", ["a.stop.test", "A"]],
    ["rcode NXDOMAIN to NOERROR", ["nx.rcode.test", "A"]],
    ["rcode, other names keep theirs", ["nx.other.test", "A"]],
    ["invalid name after rewrite is SERVFAIL", ["a.invalid.test", "A"]],
    ["without EDNS", ["+noedns", "www.prefix.test", "A"]],
    ["over TCP", ["+tcp", "a.suffix.test", "A"]],
    ["edns0 local set, echoed as a supported option", ["a.edns-local.test", "A"]],
    ["edns0 local set, client without EDNS gets the new OPT", ["+noedns", "a.edns-local.test", "A"]],
    ["edns0 local append with hex data", ["a.edns-hex.test", "A"]],
    ["edns0 local variables", ["Mixed.Edns-Vars.test", "AAAA"]],
    ["edns0 local variables over TCP", ["+tcp", "a.edns-vars.test", "A"]],
    ["edns0 local revert", ["a.edns-revert.test", "A"]],
    ["edns0 subnet set", ["a.edns-subnet.test", "A"]],
    ["edns0 subnet set replaces the client's", ["+subnet=10.1.2.3/32", "a.edns-subnet.test", "A"]],
    ["edns0 subnet replace", ["+subnet=10.1.2.3/32", "a.edns-subnet-replace.test", "A"]],
    ["edns0 subnet replace, nothing to replace", ["a.edns-subnet-replace.test", "A"]],
    ["edns0 nsid set reaches the next server", ["a.edns-nsid.test", "A"]],
    ["edns0 nsid set revert", ["a.edns-nsid-revert.test", "A"]],
    ["edns0 nsid unset", ["+nsid", "a.edns-nsid-unset.test", "A"]],
    ["cname exact: target rewritten and resolved again", ["cname.x.cname-exact.test", "A"]],
    ["cname exact, other types", ["cname.x.cname-exact.test", "TXT"]],
    ["cname suffix", ["cname.x.cname-suffix.test", "A"]],
    ["cname suffix without the final dot never matches", ["cname.x.cname-bare.test", "A"]],
    ["cname regex", ["cname.a.cname-regex.test", "A"]],
  ];
  // Linear in RE2, exponential in a backtracking engine: forty `a`s and no `b` would hold the event loop for
  // hours. The crafted query (no match: forwarded as it is) and one sent beside it are both answered.
  test("name regex with a nested repeat against a crafted name: that query and the next are answered", async () => {
    const [crafted, next] = await Promise.all([
      pair.dig(`${"a".repeat(40)}.redos.test`, "A"),
      pair.dig("www.exact.test", "A"),
    ]);
    assert.match(crafted.coredns, /IN A /);
    assert.equal(crafted.ours, crafted.coredns);
    assert.equal(next.ours, next.coredns);
  });
  for (const [title, args] of cases) {
    test(title, async () => {
      const { ours, coredns } = await pair.dig(...args);
      assert.equal(ours, coredns);
    });
  }
});

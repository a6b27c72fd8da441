// Differential test of the rewrite plugin: our server and CoreDNS run one Corefile in which every zone holds
// one rewrite scenario, all forwarding to the same small static upstream started here.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import type { Message, ResourceRecord } from "@switchyard/resolver";
import { decodeMessage, encodeMessage, parseRecord, replyTo } from "@switchyard/resolver";
import { differentialSkip, type Pair, startPair } from "./helpers/differential.js";

/**
 * Answers every name: `nx.*` is NXDOMAIN, `cname.<rest>` is a CNAME to `target.<rest>` plus its address,
 * anything else gets an A (TTL 300) for A queries and no records for other types. Replies carry no OPT, so
 * both servers add their own.
 */
async function staticUpstream(): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (packet, rinfo) => {
    const decoded = decodeMessage(packet);
    if (decoded.kind !== "message") return;
    const query = decoded.message;
    const q = query.question[0];
    if (!q) return;
    const reply: Message = { ...replyTo(query), ra: true };
    const name = q.name.toLowerCase();
    if (name.startsWith("nx.")) reply.rcode = 3;
    else reply.answer = answersFor(q.name, q.type);
    sock.send(encodeMessage(reply), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  return { port: sock.address().port, close: () => sock.close() };
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
`;

// `class` rules are left out: our server refuses every class other than IN before the chain runs (see
// src/server/accept.ts in the resolver), so a `class CH IN` rule never sees a query there; the unit tests
// cover the rule itself.
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
  ];
  for (const [title, args] of cases) {
    test(title, async () => {
      const { ours, coredns } = await pair.dig(...args);
      assert.equal(ours, coredns);
    });
  }
});

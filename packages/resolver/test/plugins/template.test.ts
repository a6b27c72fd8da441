import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, ResponseWriter } from "../../src/plugin/handler.js";
import { parseUint } from "../../src/plugin/pkg/parse-uint.js";
import { parseTemplatedRR } from "../../src/plugins/template/rr-parse.js";
import type { TemplateData } from "../../src/plugins/template/tmpl-exec.js";
import { executeTemplate } from "../../src/plugins/template/tmpl-exec.js";
import { parseTemplate } from "../../src/plugins/template/tmpl-parse.js";
import type { ResolverDeps } from "../../src/registry.js";
import { defaultRegistry } from "../../src/registry.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";

const TYPES: Record<string, number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  ANY: 255,
};
const NEXT_RCODE = 3841;

interface Answer {
  rcode: number;
  error?: string;
  reply?: Message;
  answer: string[];
  authority: string[];
  additional: string[];
}

/** Builds a Corefile and asks its first block's chain directly. */
function build(corefile: string, deps: Partial<ResolverDeps> = {}, registry = defaultRegistry()) {
  const metrics = new Metrics();
  const config = buildConfig(parseCorefile(corefile, { env: {} }), {
    registry,
    deps: { metrics, ...deps } as ResolverDeps,
  });
  const handler = config.servers[0]?.sites[0]?.handler as Handler;
  return { metrics, ask: (name: string, type: string, cls = 1) => askWith(handler, name, type, cls) };
}

/** A server block whose last plugin answers nothing and says so with a private rcode: fallthrough shows. */
function withMarker(body: string, keys = ".") {
  const marker: Handler = { name: "marker", serveDNS: async () => ({ rcode: NEXT_RCODE }) };
  const registry = defaultRegistry();
  registry.set("whoami", () => ({ plugin: () => marker }));
  return build(`${keys} {\n${body}\nwhoami\n}\n`, {}, registry);
}

async function askWith(handler: Handler, name: string, type: string, cls: number): Promise<Answer> {
  let reply: Message | undefined;
  const w: ResponseWriter = {
    transport: "udp",
    remote: { address: "10.240.0.1", port: 5353, family: "IPv4" },
    write: (m) => {
      reply = m;
    },
  };
  const q = newQuery(name, TYPES[type] ?? Number(type));
  (q.question[0] as { class: number }).class = cls;
  const result = await handler.serveDNS({ zone: ".", server: "dns://:53" }, w, q);
  return {
    rcode: result.rcode,
    ...(result.error ? { error: result.error.message } : {}),
    ...(reply ? { reply } : {}),
    answer: (reply?.answer ?? []).map(formatRecord),
    authority: (reply?.authority ?? []).map(formatRecord),
    additional: (reply?.additional ?? []).map(formatRecord),
  };
}

const IP_A = `template IN A example {
  match (^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
  fallthrough
}`;

function data(over: Partial<TemplateData> = {}): TemplateData {
  return {
    zone: "example.",
    name: "ip-10-1-2-3.example.",
    regex: "x",
    match: ["ip-10-1-2-3.example.", "1", "2"],
    group: new Map([
      ["0", "ip-10-1-2-3.example."],
      ["1", "1"],
      ["2", "2"],
      ["b", "1"],
    ]),
    class: "IN",
    type: "A",
    question: { name: "IP-10-1-2-3.example.", type: 1, class: 1 },
    remote: "10.240.0.1",
    meta: () => "",
    ...over,
  };
}

const run = (text: string, d: TemplateData = data()) => executeTemplate(parseTemplate("answer", text), d);

describe("template: the Go template subset", () => {
  test("fields, groups by name and number, index, and Go's printing", () => {
    assert.equal(
      run("{{ .Name }} {{ .Zone }} {{ .Class }} {{ .Type }} {{ .Remote }}"),
      "ip-10-1-2-3.example. example. IN A 10.240.0.1",
    );
    assert.equal(
      run('{{ .Group.b }}-{{ index .Group "b" }}-{{ index .Match 1 }}-{{ index .Group `2` }}'),
      "1-1-1-2",
    );
    assert.equal(
      run('{{ .Group.zz }}|{{ index .Group "zz" }}'),
      "<no value>|",
      'a missing key: <no value> as a field, "" by index',
    );
    assert.equal(run("{{ .Match }}"), "[ip-10-1-2-3.example. 1 2]");
    assert.equal(
      run("{{ .Question.Name }} {{ .Question.Qtype }} {{ .Question.Qclass }}"),
      "IP-10-1-2-3.example. 1 1",
    );
    assert.equal(run(`{{ .Meta "kubernetes/client-namespace" }}x`), "x");
    assert.equal(run("a  {{- .Group.b -}}  b {{/* a comment */}}c"), "a1b c");
  });

  test("printf, print, len, pipelines, parentheses and parseInt", () => {
    assert.equal(run(`{{ printf "%s-%03d-%x" .Name 7 255 }}`), "ip-10-1-2-3.example.-007-ff");
    assert.equal(run(`{{ .Group.b | printf "<%s>" }}`), "<1>");
    assert.equal(
      run(`{{ printf "%d" (parseInt "7b" 16 8) }} {{ len .Match }} {{ print 1 2 "x" }}`),
      "123 3 1 2x",
    );
    assert.equal(run(`{{ printf "%d %s" "x" }}`), "%!d(string=x) %!s(MISSING)");
    assert.equal(run(`{{ parseInt "ff" 16 8 }}.{{ parseInt "0x10" 0 64 }}`), "255.16");
  });

  test("run-time errors read as Go's", () => {
    const broken = `{{ .Name }} 60 IN TXT "{{ index .Match 3 }}"`;
    assert.throws(() => run(broken), {
      message: `template: answer:1:26: executing "answer" at <index .Match 3>: error calling index: index out of range: 3`,
    });
    assert.throws(() => run(`{{ .Name }} 60 IN TXT "{{ parseInt "gg" 16 8 }}"`), {
      message: `template: answer:1:26: executing "answer" at <parseInt "gg" 16 8>: error calling parseInt: strconv.ParseUint: parsing "gg": invalid syntax`,
    });
    assert.throws(() => run("{{ .Grup.d }}"), /can't evaluate field Grup in type \*template.templateData/);
    assert.throws(() => run("{{ parseInt }}"), /wrong number of args for parseInt: want 3 got 0/);
  });

  test("Go's parse errors, and what is refused as unsupported", () => {
    assert.throws(() => parseTemplate("answer", "{{"), { message: "template: answer:1: unclosed action" });
    assert.throws(() => parseTemplate("answer", "{{ notAFunction }}"), {
      message: 'template: answer:1: function "notAFunction" not defined',
    });
    assert.throws(() => parseTemplate("answer", "{{ }}"), /missing value for command/);
    for (const text of [
      '{{ define "x" }}x{{ end }}',
      "{{ $ }}",
      "{{ $.Message }}",
      "{{ slice .Name 1 }}",
      "{{ .Message }}",
      "{{ . }}",
      "{{ .Question }}",
      `{{ printf "%e" 1 }}`,
      "{{ 1.5 }}",
    ])
      assert.throws(
        () => parseTemplate("answer", text),
        (err: Error) => err.constructor.name === "UnsupportedTemplate",
        text,
      );
    assert.equal(
      parseTemplate("answer", "{{ .Name }} 60 IN A {{ .Group.b }}").text,
      "{{.Name}} 60 IN A {{.Group.b}}",
    );
  });

  test("parseInt is strconv.ParseUint", () => {
    assert.equal(parseUint("7f", 16, 8), 127n);
    assert.equal(parseUint("256", 10, 8), 'strconv.ParseUint: parsing "256": value out of range');
    assert.equal(parseUint("0b101", 0, 0), 5n);
    assert.equal(parseUint("017", 0, 64), 15n);
    assert.equal(parseUint("1_000", 0, 64), 1000n);
    assert.equal(parseUint("-1", 10, 64), 'strconv.ParseUint: parsing "-1": invalid syntax');
    assert.equal(parseUint("1", 1, 64), 'strconv.ParseUint: parsing "1": invalid base 1');
    assert.equal(parseUint("1", 10, 65), 'strconv.ParseUint: parsing "1": invalid bit size 65');
  });
});

describe("template: reading the templated record (miekg's NewRR)", () => {
  const line = (text: string) => {
    const rr = parseTemplatedRR(text);
    return rr ? formatRecord(rr) : undefined;
  };
  test("TTL and class are optional and in either order; names are made absolute", () => {
    assert.equal(line("foogle.com 60 IN CNAME google.com"), "foogle.com. 60 IN CNAME google.com.");
    assert.equal(line("x.example. IN 1h A 10.0.0.1"), "x.example. 3600 IN A 10.0.0.1");
    assert.equal(line("ns0.example. A 203.0.113.8"), "ns0.example. 3600 IN A 203.0.113.8");
    assert.equal(line("@ 60 IN NS ns.example."), ". 60 IN NS ns.example.");
    assert.equal(
      line("invalid. 60 IN SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"),
      "invalid. 60 IN SOA ns.invalid. hostmaster.invalid. 1 60 60 60 60",
    );
    assert.equal(line("m.example. 60 MX 10 m.example."), "m.example. 60 IN MX 10 m.example.");
    assert.equal(
      line("_s._tcp.example. 60 IN SRV 0 5 80 t.example"),
      "_s._tcp.example. 60 IN SRV 0 5 80 t.example.",
    );
    assert.equal(line('t.example. 60 CH TXT "a b" c ; comment'), 't.example. 60 CH TXT "a b" "c"');
    assert.equal(line("x.example. 60 IN AAAA ::ffff:10.0.0.1"), "x.example. 60 IN AAAA ::ffff:a00:1");
    assert.equal(line("x.example. 60 IN TYPE65280 \\# 2 abcd"), "x.example. 60 IN TYPE65280 \\# 2 abcd");
    assert.equal(line(""), undefined);
  });

  test("what NewRR refuses", () => {
    for (const bad of [
      "test.example.",
      "x.example. 60 IN A 1.2.3",
      "x.example. 60 IN A ::1",
      "x.example. 60 IN AAAA 1.2.3.4",
      "x.example. 60 IN A 1.2.3.4 extra",
      "x.example. 60 IN MX 70000 m.",
      "x.example. 60 IN HINFO a b",
      "x..example. 60 IN A 1.2.3.4",
    ])
      assert.throws(() => parseTemplatedRR(bad), bad);
  });
});

describe("template: setup", () => {
  const setupError = (body: string) => {
    try {
      build(`domain.com:8053 {\n${body}\n}`);
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  };
  test("upstream's errors, upstream's wording", () => {
    const at = (line: number, m: string) => `plugin/template: Corefile:${line} - Error during parsing: ${m}`;
    assert.equal(
      setupError("template"),
      at(2, "Wrong argument count or unexpected line ending after 'template'"),
    );
    assert.equal(setupError("template X"), at(2, "invalid query class X"));
    assert.equal(setupError("template in A"), at(2, "invalid query class in"), "classes are case-sensitive");
    assert.equal(
      setupError("template ANY"),
      at(2, "Wrong argument count or unexpected line ending after 'ANY'"),
    );
    assert.equal(setupError("template ANY X"), at(2, "invalid RR class X"));
    assert.equal(
      setupError("template ANY ANY {\nnotavailable\n}"),
      at(3, "Wrong argument count or unexpected line ending after 'notavailable'"),
    );
    assert.equal(
      setupError("template ANY ANY {\nanswer\n}"),
      at(3, "Wrong argument count or unexpected line ending after 'answer'"),
    );
    assert.equal(
      setupError("template ANY ANY {\nrcode\n}"),
      at(3, "Wrong argument count or unexpected line ending after 'rcode'"),
    );
    assert.equal(setupError("template ANY ANY {\nrcode UNDEFINED\n}"), at(3, "unknown rcode UNDEFINED"));
    assert.equal(
      setupError('template ANY ANY {\nadditional "{{"\n}'),
      at(3, "could not compile template: {{, template: additional:1: unclosed action"),
    );
    assert.equal(
      setupError('template ANY ANY {\nanswer "{{ notAFunction }}"\n}'),
      at(
        3,
        'could not compile template: {{ notAFunction }}, template: answer:1: function "notAFunction" not defined',
      ),
    );
    assert.equal(
      setupError('template ANY ANY {\nederror invalid "Blocked according to RFC2606"\n}'),
      at(
        3,
        'error parsing extended DNS error code Blocked according to RFC2606, strconv.ParseUint: parsing "invalid": invalid syntax',
      ),
    );
    assert.equal(
      setupError("template ANY ANY {\nederror too many arguments\n}"),
      at(3, "Wrong argument count or unexpected line ending after 'arguments'"),
    );
    assert.match(
      setupError(`template ANY A example.com {\nmatch ${"a".repeat(10001)}\n}`) ?? "",
      /regex pattern too long: 10001 > 10000/,
    );
    assert.match(setupError("template ANY A {\nmatch (?=x)\n}") ?? "", /could not parse regex: \(\?=x\)/);
  });

  test("what upstream accepts", () => {
    for (const body of [
      'template ANY ANY {\nanswer "{{ parseInt }}"\nadditional "{{ parseInt }}"\nauthority "{{ parseInt }}"\n}',
      "template ANY ANY (?P<x>",
      "template ANY ANY {\n\n}",
      'template ANY A example.com {\nmatch ip-(?P<a>[0-9]*)\nanswer "{{ .Name }} A {{ .Group.a }}.{{ .Grup.d }}."\nfallthrough\n}',
      `template ANY ANY invalid {\nrcode NXDOMAIN\nauthority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"\nederror 21 "Blocked according to RFC2606"\n}`,
      "template IN ANY {\nupstream\nrcode NOTIMPL\n}",
    ])
      assert.equal(setupError(body), undefined, body);
  });

  test("refused here: what would answer differently", () => {
    assert.match(
      setupError('template IN A {\nanswer "{{ template \\"x\\" }}"\n}') ?? "",
      /could not compile template: .*\{\{ template \}\} is not supported by this implementation/,
    );
    assert.match(
      setupError('template IN ANY {\nanswer "{{ .Name }} 60 IN HINFO a b"\n}') ?? "",
      /RR type HINFO is not supported by this implementation/,
    );
  });
});

describe("template: answering", () => {
  test("an A record from regex groups; other names fall through", async () => {
    const s = withMarker(IP_A);
    const a = await s.ask("IP-10-95-12-8.example.", "A");
    assert.equal(a.rcode, 0);
    assert.deepEqual(a.answer, ["ip-10-95-12-8.example. 60 IN A 10.95.12.8"]);
    assert.equal(a.reply?.aa, true);
    assert.equal((await s.ask("something.example.", "A")).rcode, NEXT_RCODE);
    assert.equal(
      (await s.ask("ip-10-1-2-3.example.", "MX")).rcode,
      NEXT_RCODE,
      "another type is not this template's",
    );
    assert.equal((await s.ask("ip-10-1-2-3.other.", "A")).rcode, NEXT_RCODE, "outside the zones");
    assert.deepEqual((await s.ask("ip-10-1-2-3.example.", "ANY")).answer, [
      "ip-10-1-2-3.example. 60 IN A 10.1.2.3",
    ]);
  });

  test("the client's address, and the template's class and type for ANY questions", async () => {
    const s = withMarker(
      `template ANY ANY {\nanswer "{{ .Name }} 60 IN TXT \\"{{ .Remote }} {{ .Class }} {{ .Type }}\\""\n}`,
    );
    assert.deepEqual((await s.ask("x.test.", "TXT")).answer, ['x.test. 60 IN TXT "10.240.0.1 IN TXT"']);
    assert.deepEqual((await s.ask("x.test.", "ANY", 255)).answer, ['x.test. 60 IN TXT "10.240.0.1 ANY ANY"']);
  });

  test("the multi-section example: REFUSED, fallthrough, CH TXT, SERVFAIL without fallthrough", async () => {
    const s = withMarker(
      `template IN A {
  rcode REFUSED
}
template IN TXT {
  match "$^"
  rcode SERVFAIL
  fallthrough
}
template CH TXT coredns.invalid {
  answer "{{ .Name }} 60 CH TXT \\"test\\""
}
${IP_A}
template IN MX example {
  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer "{{ .Name }} 60 IN MX 10 {{ .Name }}"
  additional "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
}`,
      "test.:8053 example.:8053 coredns.invalid.:8053",
    );
    const refused = await s.ask("some.test.", "A");
    assert.equal(refused.rcode, 5);
    assert.equal(refused.reply?.rcode, 5, "the reply is written, with the rcode");
    assert.equal((await s.ask("some.test.", "TXT")).rcode, NEXT_RCODE);
    assert.deepEqual((await s.ask("coredns.invalid.", "TXT", 3)).answer, [
      'coredns.invalid. 60 CH TXT "test"',
    ]);
    const mx = await s.ask("ip-10-11-12-13.example.", "MX");
    assert.deepEqual(mx.answer, ["ip-10-11-12-13.example. 60 IN MX 10 ip-10-11-12-13.example."]);
    assert.deepEqual(mx.additional, ["ip-10-11-12-13.example. 60 IN A 10.11.12.13"]);
    assert.equal((await s.ask("something.example.", "MX")).rcode, 2);
  });

  test("NXDOMAIN with a SOA, and an Extended DNS Error", async () => {
    const s = withMarker(`template ANY ANY invalid {
  rcode NXDOMAIN
  authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"
  ederror 21 "Blocked according to RFC2606"
}`);
    const a = await s.ask("test.invalid.", "A");
    assert.equal(a.rcode, 3);
    assert.deepEqual(a.authority, ["invalid. 60 IN SOA ns.invalid. hostmaster.invalid. 1 60 60 60 60"]);
    const ede = a.reply?.edns?.options[0];
    assert.equal(ede?.code, 15);
    assert.equal(ede?.data.readUInt16BE(0), 21);
    assert.equal(ede?.data.subarray(2).toString(), "Blocked according to RFC2606");
  });

  test("failures: SERVFAIL with the error, and counted", async () => {
    const s = withMarker(`template ANY ANY example {
  match "[.]example[.]$"
  answer "{{ .Name }} 60 IN TXT \\"{{ index .Match 2 }}\\""
}
template ANY ANY other {
  answer "{{ .Name }}"
}`);
    const broken = await s.ask("test.example.", "TXT");
    assert.equal(broken.rcode, 2);
    assert.match(broken.error ?? "", /index out of range: 2/);
    const nonRR = await s.ask("test.other.", "TXT");
    assert.equal(nonRR.rcode, 2);
    assert.match(nonRR.error ?? "", /not a TTL/);
    const text = await s.metrics.text();
    assert.match(
      text,
      /coredns_template_matches_total\{server="dns:\/\/:53",zone="example.",view="",class="IN",type="TXT"\} 1/,
    );
    assert.match(
      text,
      /coredns_template_template_failures_total\{server="dns:\/\/:53",zone="example.",view="",class="IN",type="TXT",section="answer",template="\{\{.Name\}\} 60 IN TXT \\"\{\{index .Match 2\}\}\\""\} 1/,
    );
    assert.match(
      text,
      /coredns_template_rr_failures_total\{[^}]*zone="other.",[^}]*section="answer",template="\{\{.Name\}\}"\} 1/,
    );
  });

  test("rcode SERVFAIL writes nothing; a CNAME is followed through the upstream for A", async () => {
    const asked: string[] = [];
    const upstream = async (name: string, qtype: number) => {
      asked.push(`${name} ${qtype}`);
      const reply = newQuery(name, qtype);
      reply.tc = true;
      reply.answer = [{ name, type: "A", class: 1, ttl: 600, data: "1.2.3.4" }];
      return reply;
    };
    const s = build(
      `. {
  template IN ANY foogle.com {
    match "^foogle\\.com\\.$"
    answer "foogle.com 60 IN CNAME google.com"
  }
  template IN ANY fail.test {
    rcode SERVFAIL
  }
}`,
      { upstream },
    );
    const a = await s.ask("foogle.com.", "A");
    assert.deepEqual(a.answer, ["foogle.com. 60 IN CNAME google.com.", "google.com. 600 IN A 1.2.3.4"]);
    assert.equal(a.reply?.tc, true, "the upstream's TC bit is copied");
    assert.deepEqual((await s.ask("foogle.com.", "TXT")).answer, ["foogle.com. 60 IN CNAME google.com."]);
    assert.deepEqual(asked, ["google.com. 1"]);
    const fail = await s.ask("x.fail.test.", "A");
    assert.equal(fail.rcode, 2);
    assert.equal(fail.reply, undefined);
  });
});

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { nxdomainUpstream } from "../src/testing/process.js";

// The template plugin, compared with CoreDNS's binary: one server block holding several templates, a
// forward behind them for whatever falls through, the same dig, the same answer.
const skip = differentialSkip();

const corefile = (up: number) => `.:{{PORT}} {
  template IN A example {
    match (^|[.])ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
    answer "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
    fallthrough
  }
  template IN MX example {
    match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
    answer "{{ .Name }} 60 IN MX 10 {{ .Name }}"
    additional "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
    additional "ns0.example. 60 IN A 203.0.113.8"
    authority "example. 60 IN NS ns0.example."
    authority "example. 60 IN NS ns1.example."
  }
  template IN PTR in-addr.arpa {
    match ^(?P<d>[0-9]*)[.](?P<c>[0-9]*)[.](?P<b>[0-9]*)[.](?P<a>[0-9]*)[.]in-addr[.]arpa[.]$
    answer "{{ .Name }} 60 IN PTR ip-{{ .Group.a }}-{{ .Group.b }}-{{ .Group.c }}-{{ .Group.d }}.example."
  }
  template ANY ANY invalid {
    rcode NXDOMAIN
    authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"
    ederror 21 "Blocked according to RFC2606"
  }
  template IN A hex.test {
    match "^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]hex[.]test[.]$"
    answer "{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}"
  }
  template IN ANY txt.test {
    answer "{{ .Name }} 60 IN TXT \\"{{ .Class }} {{ .Type }} {{ index .Match 0 }} {{ printf \\"%05d\\" 42 }} {{ .Group.x }}\\""
  }
  template IN ANY cname.test {
    match ^www[.]cname[.]test[.]$
    answer "www.cname.test. 60 IN CNAME ip-10-1-1-1.example."
  }
  template IN A refused.test {
    rcode REFUSED
  }
  template IN ANY logic.test {
    match ^(?P<kind>[a-z]+)-(?P<n>[0-9]+)[.]logic[.]test[.]$
    answer "{{ if eq .Type \\"TXT\\" \\"SPF\\" }}{{ .Name }} 60 IN TXT \\"{{ .Group.kind }}\\"{{ else if and (eq .Group.kind \\"big\\") (gt (parseInt .Group.n 10 8) 100) }}{{ .Name }} 60 IN A 10.0.0.{{ .Group.n }}{{ else }}{{ .Name }} 60 IN A 10.0.1.{{ if not (lt (parseInt .Group.n 10 8) 10) }}{{ .Group.n }}{{ else }}0{{ end }}{{ end }}"
    answer "{{ if or (eq .Question.Qtype 16) (ne .Group.missing \\"\\") }}{{ .Name }} 60 IN TXT \\"{{ le 2 2 }} {{ ge \\"a\\" \\"b\\" }} {{ and .Group.kind 0 }} {{ or \\"\\" .Group.n }}\\"{{ else }}{{ .Name }} 60 IN TXT \\"no\\"{{ end }}"
  }
  template IN A logicfail.test {
    answer "{{ if lt .Name 1 }}x{{ end }}"
  }
  template IN TXT range.test {
    match ^(?P<a>[a-z]+)-(?P<b>[0-9]+)[.]range[.]test[.]$
    answer "{{ .Name }} 60 IN TXT{{ range $i, $e := .Match }} \\"{{ $i }}={{ $e }}\\"{{ end }}"
    answer "{{ $last := \\"\\" }}{{ range $k, $v := .Group }}{{ $last = $k }}{{ end }}{{ .Name }} 60 IN TXT \\"{{ $last }}\\"{{ with .Group.zz }} \\"z\\"{{ else with .Group.b }} \\"b={{ . }}\\"{{ end }}"
    answer "{{ .Name }} 60 IN TXT \\"n\\"{{ range $i := parseInt .Group.b 10 8 }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if gt $i 3 }}{{ break }}{{ end }} \\"{{ $i }}\\"{{ else }} \\"none\\"{{ end }}"
  }
  template IN A range.test {
    match ^(?P<n>[a-z]+)[.]range[.]test[.]$
    answer "{{ range .Name }}{{ end }}"
  }
  template IN A redos.test {
    match ^(a+)+b[.]redos[.]test[.]$
    answer "{{ .Name }} 60 IN A 192.0.2.1"
    fallthrough
  }
  template IN A broken.test {
    answer "{{ .Name }} 60 IN TXT \\"{{ index .Match 2 }}\\""
  }
  forward . 127.0.0.1:${up}
}
`;

describe("template, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  let upstream: Awaited<ReturnType<typeof nxdomainUpstream>>;
  before(async () => {
    upstream = await nxdomainUpstream();
    pair = await startPair(corefile(upstream.port));
  });
  after(async () => {
    await pair?.stop();
    upstream?.close();
  });

  // Each query with something CoreDNS's answer must show, so that agreeing on an empty answer cannot pass.
  const queries: [string[], RegExp][] = [
    [["ip-10-95-12-8.example", "A"], /IN A 10\.95\.12\.8/],
    [["IP-10-95-12-8.Example", "A"], /ip-10-95-12-8\.example\. 60 IN A 10\.95\.12\.8/],
    [["a.ip-1-2-3-4.example", "A"], /IN A 1\.2\.3\.4/],
    [["something.example", "A"], /status: NXDOMAIN/],
    [["ip-10-1-2-3.example", "MX"], /IN NS ns1\.example\.[\s\S]*ns0\.example\. 60 IN A 203\.0\.113\.8/],
    [["something.example", "MX"], /status: SERVFAIL/],
    [["ip-10-1-2-3.example", "ANY"], /IN A 10\.1\.2\.3/],
    [["ip-10-1-2-3.example", "TXT"], /status: NXDOMAIN/],
    [["-x", "10.1.2.3"], /IN PTR ip-10-1-2-3\.example\./],
    [["4.3.2.1.in-addr.arpa", "PTR"], /IN PTR ip-1-2-3-4\.example\./],
    [["test.invalid", "A"], /EDE: 21[\s\S]*IN SOA ns\.invalid\./],
    [["test.invalid", "MX", "+tcp"], /status: NXDOMAIN/],
    [["+noedns", "test.invalid", "A"], /EDE: 21[\s\S]*IN SOA ns\.invalid\./],
    [["ip0a5f0c09.hex.test", "A"], /IN A 10\.95\.12\.9/],
    [["nothex.hex.test", "A"], /status: SERVFAIL/],
    [["foo.txt.test", "TXT"], /"IN TXT foo\.txt\.test\. 00042 <no value>"/],
    [["foo.txt.test", "A"], /"IN A foo\.txt\.test\. 00042 <no value>"/],
    [["www.cname.test", "A"], /IN CNAME ip-10-1-1-1\.example\.[\s\S]*IN A 10\.1\.1\.1/],
    [["www.cname.test", "AAAA"], /IN CNAME/],
    [["www.cname.test", "TXT"], /IN CNAME/],
    [["x.refused.test", "A"], /status: REFUSED/],
    // A missing group is not equal to "", so `ne` is true and the TXT is there for A questions too.
    [["big-200.logic.test", "A"], /IN A 10\.0\.0\.200[\s\S]*IN TXT "true false 0 200"/],
    [["big-50.logic.test", "A"], /IN A 10\.0\.1\.50/],
    [["small-5.logic.test", "A"], /IN A 10\.0\.1\.0/],
    [["small-5.logic.test", "TXT"], /IN TXT "small"[\s\S]*IN TXT "true false 0 5"/],
    [["big-300.logic.test", "A"], /status: SERVFAIL/],
    [["x.logicfail.test", "A"], /status: SERVFAIL/],
    [["x.broken.test", "A"], /status: SERVFAIL/],
    [
      ["abc-12.range.test", "TXT"],
      /"0=abc-12\.range\.test\." "1=abc" "2=12"[\s\S]*IN TXT "b" "b=12"[\s\S]*"n" "0" "2" "3"$/,
    ],
    [["x-0.range.test", "TXT"], /IN TXT "n" "none"/],
    [["x.range.test", "A"], /status: SERVFAIL/],
    [["other.test", "A"], /status: NXDOMAIN/],
  ];
  // The pattern is linear in RE2 and exponential in a backtracking engine: forty `a`s and no `b` would hold
  // the event loop for hours. The crafted query and one sent beside it are both answered.
  test("a nested repeat against a crafted name: that query and the next are answered", async () => {
    const [crafted, next] = await Promise.all([
      pair.dig(`${"a".repeat(40)}.redos.test`, "A"),
      pair.dig("ip-10-95-12-8.example", "A"),
    ]);
    assert.match(crafted.coredns, /status: NXDOMAIN/);
    assert.equal(crafted.ours, crafted.coredns);
    assert.equal(next.ours, next.coredns);
  });
  for (const [query, shows] of queries)
    test(query.join(" "), async () => {
      const { ours, coredns } = await pair.dig(...query);
      assert.match(coredns, shows);
      assert.equal(ours, coredns);
    });
});

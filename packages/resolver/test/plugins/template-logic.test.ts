// The expected outputs and errors here are what Go's text/template gave for the same templates and data.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TemplateData } from "../../src/plugins/template/tmpl-exec.js";
import { executeTemplate } from "../../src/plugins/template/tmpl-exec.js";
import { parseTemplate } from "../../src/plugins/template/tmpl-parse.js";

const data: TemplateData = {
  zone: "example.",
  name: "ip-10-1.example.",
  regex: "x",
  match: ["ip-10-1.example.", "10", "1"],
  group: new Map([
    ["0", "ip-10-1.example."],
    ["1", "10"],
    ["2", "1"],
    ["a", "10"],
  ]),
  class: "IN",
  type: "A",
  question: { name: "ip-10-1.example.", type: 1, class: 1 },
  remote: "127.0.0.1",
  meta: () => "",
};

const run = (text: string) => executeTemplate(parseTemplate("answer", text), data);

describe("template: if, else and the logic builtins", () => {
  const outputs: [string, string][] = [
    ['{{ if eq .Type "A" }}a{{ else if eq .Type "AAAA" }}b{{ else }}c{{ end }}', "a"],
    ["{{ if .Group.missing }}y{{ else }}n{{ end }}", "n"],
    ['{{ eq .Group.missing "x" }}', "false"],
    ["{{ not .Group.missing }}", "true"],
    ['{{ and .Group.missing "x" }}', "<no value>"],
    ['{{ or "" .Group.missing }}', "<no value>"],
    ["{{ and 0 (index .Match 9) }}", "0"],
    ["{{ or 1 (index .Match 9) }}", "1"],
    ["{{ eq .Question.Qtype 1 }}", "true"],
    ["{{ lt .Question.Qtype 2 }}", "true"],
    ["{{ gt (parseInt .Group.a 10 8) 5 }}", "true"],
    ['{{ ge "b" "a" }} {{ le 2 2 }} {{ ne 1 2 }} {{ eq 1 2 3 1 }}', "true true true true"],
    ['{{ "x" | and 1 }}', "x"],
    ["{{ if 1 }}a{{ else if 0 }}b{{ else if 1 }}c{{ end }}", "a"],
    ["{{ if 0 }}a{{ else if 0 }}b{{ else if 1 }}c{{ end }}", "c"],
    ["{{ if .Group.missing }}a{{ end }}", ""],
    ["{{ if .Match }}{{ if not (index .Match 2) }}x{{ else }}{{ index .Match 2 }}{{ end }}{{ end }}", "1"],
  ];
  for (const [text, out] of outputs) test(text, () => assert.equal(run(text), out));

  const failures: [string, string][] = [
    [
      "{{ and 1 (index .Match 9) }}",
      'template: answer:1:10: executing "answer" at <index .Match 9>: error calling index: index out of range: 9',
    ],
    [
      "{{ eq .Name 1 }}",
      'template: answer:1:3: executing "answer" at <eq .Name 1>: error calling eq: incompatible types for comparison: string and int',
    ],
    [
      "{{ lt .Match .Match }}",
      'template: answer:1:3: executing "answer" at <lt .Match .Match>: error calling lt: invalid type for comparison',
    ],
    [
      "{{ eq .Match .Match }}",
      'template: answer:1:3: executing "answer" at <eq .Match .Match>: error calling eq: non-comparable type [ip-10-1.example. 10 1]: []string',
    ],
    [
      "{{ lt true false }}",
      'template: answer:1:3: executing "answer" at <lt true false>: error calling lt: invalid type for comparison',
    ],
    [
      "{{ eq 1 }}",
      'template: answer:1:3: executing "answer" at <eq 1>: error calling eq: missing argument for comparison',
    ],
    [
      "{{ eq }}",
      'template: answer:1:3: executing "answer" at <eq>: wrong number of args for eq: want at least 1 got 0',
    ],
    [
      "{{ lt 1 }}",
      'template: answer:1:3: executing "answer" at <lt>: wrong number of args for lt: want 2 got 1',
    ],
    [
      "{{ and }}",
      'template: answer:1:3: executing "answer" at <and>: wrong number of args for and: want at least 1 got 0',
    ],
    [
      "{{ if index .Match 9 }}a{{ end }}",
      'template: answer:1:6: executing "answer" at <index .Match 9>: error calling index: index out of range: 9',
    ],
  ];
  for (const [text, message] of failures) test(text, () => assert.throws(() => run(text), { message }));

  const parseErrors: [string, string][] = [
    ["{{ if 1 }}x", "template: answer:1: unexpected EOF"],
    ["{{ end }}", "template: answer:1: unexpected {{end}}"],
    ["{{ else }}", "template: answer:1: unexpected {{else}}"],
    ["{{ if 1 }}{{ else }}{{ else }}{{ end }}", "template: answer:1: expected end; found {{else}}"],
    ["{{ if }}{{ end }}", "template: answer:1: missing value for if"],
    ["{{ if 1 }}{{ end 1 }}", 'template: answer:1: unexpected "1" in end'],
    ["{{ if 1 }}{{ else 1 }}{{ end }}", 'template: answer:1: unexpected "1" in else'],
  ];
  for (const [text, message] of parseErrors) {
    test(`parse: ${text}`, () => assert.throws(() => parseTemplate("answer", text), { message }));
  }

  test("the tree written back out, as Go's String() writes it (the metric label)", () => {
    assert.equal(
      parseTemplate("answer", '{{ if eq .Type "A" }}a{{ else if eq .Type "AAAA" }}b{{ else }}c{{ end }}')
        .text,
      '{{if eq .Type "A"}}a{{else}}{{if eq .Type "AAAA"}}b{{else}}c{{end}}{{end}}',
    );
    assert.equal(
      parseTemplate("answer", "{{ if 1 }}a{{ else if 0 }}b{{ else if 1 }}c{{ end }}").text,
      "{{if 1}}a{{else}}{{if 0}}b{{else}}{{if 1}}c{{end}}{{end}}{{end}}",
    );
  });
});

describe("template: range, with and variables", () => {
  // Go's outputs for these templates over the data above (go1.26 text/template).
  const outputs: [string, string][] = [
    ["{{ range .Match }}[{{ . }}]{{ end }}", "[ip-10-1.example.][10][1]"],
    ["{{ range $i, $e := .Match }}{{ $i }}={{ $e }};{{ end }}", "0=ip-10-1.example.;1=10;2=1;"],
    ["{{ range $k, $v := .Group }}{{ $k }}:{{ $v }} {{ end }}", "0:ip-10-1.example. 1:10 2:1 a:10 "],
    ["{{ range .Group }}{{ . }},{{ end }}", "ip-10-1.example.,10,1,10,"],
    ["{{ range $i := 3 }}{{ $i }}{{ end }}", "012"],
    ["{{ range (parseInt (index .Match 2) 10 8) }}{{ . }}{{ end }}", "0"],
    ["{{ range .Group.zz }}x{{ else }}empty{{ end }}", "empty"],
    ["{{ range 0 }}x{{ else }}none{{ end }}", "none"],
    ["{{ with .Group.a }}a={{ . }}{{ else }}none{{ end }}", "a=10"],
    ["{{ with .Group.zz }}z{{ else with index .Match 2 }}b={{ . }}{{ end }}", "b=1"],
    ["{{ with .Group.zz }}z{{ else }}{{ .Name }}{{ end }}", "ip-10-1.example."],
    ["{{ $x := index .Match 1 }}{{ $x }}-{{ $x }}", "10-10"],
    ["{{ $n := 0 }}{{ range .Match }}{{ $n = . }}{{ end }}{{ $n }}", "1"],
    ['{{ range .Match }}{{ if eq . "10" }}{{ break }}{{ end }}{{ . }} {{ end }}', "ip-10-1.example. "],
    ['{{ range .Match }}{{ if eq . "10" }}{{ continue }}{{ end }}{{ . }} {{ end }}', "ip-10-1.example. 1 "],
    ["{{ $.Name }} {{ with .Group.a }}{{ $.Zone }}{{ . }}{{ end }}", "ip-10-1.example. example.10"],
    ["{{ with $x := .Group.a }}{{ $x }}{{ . }}{{ end }}", "1010"],
    ["{{ if $x := .Group.a }}{{ $x }}{{ end }}", "10"],
    ['{{ range $e := .Match }}{{ $e := "s" }}{{ $e }}{{ end }}', "sss"],
    ["{{ $x := 1 }}{{ $x := 2 }}{{ $x }}", "2"],
    ["{{ range .Match }}{{ len . }}{{ end }}", "1621"],
    ["{{ with .Question }}{{ .Qtype }}{{ end }}", "1"],
    ["{{ range $i, $e := .Group }}{{ $i }}{{ end }}", "012a"],
  ];
  for (const [text, out] of outputs) test(text, () => assert.equal(run(text), out));

  const failures: [string, string][] = [
    [
      "{{ range $i, $e := 3 }}{{ end }}",
      'template: answer:1:19: executing "answer" at <3>: can\'t use 3 to iterate over more than one variable',
    ],
    [
      "{{ range .Name }}{{ end }}",
      'template: answer:1:9: executing "answer" at <.Name>: range can\'t iterate over ip-10-1.example.',
    ],
    [
      "{{ range .Match }}{{ .Name }}{{ end }}",
      'template: answer:1:21: executing "answer" at <.Name>: can\'t evaluate field Name in type string',
    ],
    [
      "{{ $x := 5 }}{{ $x.Foo }}",
      'template: answer:1:18: executing "answer" at <$x.Foo>: can\'t evaluate field Foo in type int',
    ],
    ["{{ $x = 3 }}", 'template: answer:1:8: executing "answer" at <3>: undefined variable: $x'],
  ];
  for (const [text, message] of failures) test(text, () => assert.throws(() => run(text), { message }));

  const parseErrors: [string, string][] = [
    ["{{ range .Match }}{{ $y := . }}{{ end }}{{ $y }}", 'undefined variable "$y"'],
    ["{{ $x }}", 'undefined variable "$x"'],
    ["{{ break }}", "{{break}} outside {{range}}"],
    ["{{ range $i, $e, $f := .Match }}{{ end }}", "too many declarations in range"],
    ["{{ $a, $b := 1 }}", "too many declarations in command"],
    ["{{ with }}{{ end }}", "missing value for with"],
    ["{{ range .Match }}", "unexpected EOF"],
    ["{{ range .Match }}{{ else if 1 }}{{ end }}", "unexpected <if> in input"],
    ["{{ range $i, $e := .Match }}{{ break 1 }}{{ end }}", 'unexpected "1" in {{break}}'],
  ];
  for (const [text, message] of parseErrors)
    test(text, () =>
      assert.throws(() => parseTemplate("answer", text), { message: `template: answer:1: ${message}` }),
    );

  test("the tree written back as Go's String() does (the template metric label)", () => {
    assert.equal(
      parseTemplate(
        "answer",
        "{{ range $i, $e := .Match }}{{ if $i }}{{ continue }}{{ end }}{{ $e }}{{ else }}x{{ end }}",
      ).text,
      "{{range $i, $e := .Match}}{{if $i}}{{continue}}{{end}}{{$e}}{{else}}x{{end}}",
    );
    assert.equal(
      parseTemplate(
        "answer",
        "{{ with $x := .Group.a }}{{ $x }}{{ else with $.Name }}{{ . }}{{ end }}{{ $n := 1 }}{{ $n = 2 }}",
      ).text,
      "{{with $x := .Group.a}}{{$x}}{{else}}{{with $.Name}}{{.}}{{end}}{{end}}{{$n := 1}}{{$n = 2}}",
    );
  });
});

import type { Stanza } from "../../corefile/parse.js";
import type { GoRegex } from "../../plugin/go-regex.js";
import { classByName, rcodeByName, typeByName } from "../../plugin/pkg/mnemonics.js";
import { parseUint } from "../../plugin/pkg/parse-uint.js";
import { normalizeZoneArgs } from "../../plugin/pkg/zone-args.js";
import { argError, stanzaError } from "../../plugin/setup.js";
import { compileMatch } from "./regex.js";
import { compileSection, type Section, SectionError } from "./section.js";
import type { ParsedTemplate } from "./tmpl-ast.js";

const PLUGIN = "template";

/** One `template` stanza. */
export interface TemplateRule {
  zones: string[];
  qclass: number;
  qtype: number;
  /** Tried in order; the first that matches the name wins. Never empty (`.*` by default). */
  regexes: GoRegex[];
  answer: ParsedTemplate[];
  additional: ParsedTemplate[];
  authority: ParsedTemplate[];
  rcode: number;
  /** An Extended DNS Error (RFC 8914) to attach to the reply. */
  ede?: { code: number; reason: string };
  /** Where an unmatched name goes on; undefined without `fallthrough`. */
  fallthrough?: string[];
}

/** Caddy's ArgErr names the last token it read: the last argument, or the directive itself. */
const lastToken = (line: Stanza) => line.args.at(-1) ?? line.name;
const argErrorAt = (line: Stanza, token: string) =>
  stanzaError(line, PLUGIN, `Wrong argument count or unexpected line ending after '${token}'`);

/** Reads every `template` stanza of a server block, in order, as upstream's templateParse does. */
export function parseTemplates(stanzas: readonly Stanza[], blockZones: readonly string[]): TemplateRule[] {
  return stanzas.map((stanza) => parseStanza(stanza, blockZones));
}

function parseStanza(stanza: Stanza, blockZones: readonly string[]): TemplateRule {
  const [classText, typeText, ...zoneArgs] = stanza.args;
  if (classText === undefined) throw argError(stanza, PLUGIN);
  const qclass = classByName(classText);
  if (qclass === undefined) throw stanzaError(stanza, PLUGIN, `invalid query class ${classText}`);
  if (typeText === undefined) throw argErrorAt(stanza, classText);
  const qtype = typeByName(typeText);
  // Upstream's wording, "RR class" included.
  if (qtype === undefined) throw stanzaError(stanza, PLUGIN, `invalid RR class ${typeText}`);
  const rule: TemplateRule = {
    zones: normalizeZoneArgs(zoneArgs.length > 0 ? zoneArgs : blockZones),
    qclass,
    qtype,
    regexes: [],
    answer: [],
    additional: [],
    authority: [],
    rcode: 0,
  };
  for (const line of stanza.block) parseLine(line, rule);
  if (rule.regexes.length === 0) rule.regexes.push(compileMatch(".*") as GoRegex);
  return rule;
}

function parseLine(line: Stanza, rule: TemplateRule): void {
  const args = line.args;
  switch (line.name) {
    case "match":
      if (args.length === 0) throw argError(line, PLUGIN);
      for (const pattern of args) {
        const re = compileMatch(pattern);
        if (typeof re === "string") throw stanzaError(line, PLUGIN, re);
        rule.regexes.push(re);
      }
      return;
    case "answer":
    case "additional":
    case "authority":
      if (args.length === 0) throw argError(line, PLUGIN);
      rule[line.name].push(...args.map((text) => section(line, line.name as Section, text)));
      return;
    case "rcode":
      parseRcode(line, rule);
      return;
    case "ederror":
      parseEde(line, rule);
      return;
    case "fallthrough":
      rule.fallthrough = normalizeZoneArgs(args.length > 0 ? args : ["."]);
      return;
    case "upstream":
      // Accepted and ignored, as upstream does: CNAME targets are always resolved.
      return;
    default:
      throw argError(line, PLUGIN);
  }
}

function section(line: Stanza, name: Section, text: string): ParsedTemplate {
  try {
    return compileSection(name, text);
  } catch (err) {
    if (err instanceof SectionError)
      throw stanzaError(line, PLUGIN, `could not compile template: ${lastToken(line)}, ${err.message}`);
    throw err;
  }
}

function parseRcode(line: Stanza, rule: TemplateRule): void {
  const [name, extra] = line.args;
  if (name === undefined) throw argError(line, PLUGIN);
  const rcode = rcodeByName(name);
  if (rcode === undefined) throw stanzaError(line, PLUGIN, `unknown rcode ${name}`);
  // Caddy reads a token left on the line as the next block directive, which is unknown.
  if (extra !== undefined) throw argErrorAt(line, extra);
  rule.rcode = rcode;
}

function parseEde(line: Stanza, rule: TemplateRule): void {
  const args = line.args;
  if (args.length !== 1 && args.length !== 2) throw argErrorAt(line, lastToken(line));
  const code = parseUint(args[0] as string, 10, 16);
  if (typeof code === "string")
    throw stanzaError(line, PLUGIN, `error parsing extended DNS error code ${lastToken(line)}, ${code}`);
  rule.ede = { code: Number(code), reason: args[1] ?? "" };
}

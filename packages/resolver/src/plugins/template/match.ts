import { CLASS_ANY, classText, TYPE_ANY, typeText } from "../../plugin/pkg/mnemonics.js";
import { matchZone } from "../../plugin/zones.js";
import type { Question } from "../../wire/message.js";
import type { TemplateRule } from "./options.js";
import { matchName } from "./regex.js";
import type { TemplateData } from "./tmpl-exec.js";

/** What one template makes of a question: it answers, it lets the next template try, or it fails the query. */
export type MatchOutcome = { kind: "match"; data: TemplateData } | { kind: "next" } | { kind: "servfail" };

/**
 * Upstream's template.match. Outside the template's zones, or for another class or type, the next template
 * gets its turn. Inside, the first matching regex wins; when none does, only `fallthrough` lets the query
 * go on, otherwise it is SERVFAIL. An ANY question matches any template type (and class), and `.Type` then
 * reports the template's own.
 */
export function matchRule(
  rule: TemplateRule,
  q: Question,
  qname: string,
  remote: string,
  meta: (name: string) => string,
): MatchOutcome {
  const zone = matchZone(qname, rule.zones);
  if (zone === undefined) return { kind: "next" };
  if (rule.qclass !== CLASS_ANY && q.class !== CLASS_ANY && q.class !== rule.qclass) return { kind: "next" };
  if (rule.qtype !== TYPE_ANY && q.type !== TYPE_ANY && q.type !== rule.qtype) return { kind: "next" };
  for (const regex of rule.regexes) {
    const found = matchName(regex, qname);
    if (!found) continue;
    const data: TemplateData = {
      zone,
      name: qname,
      regex: regex.source,
      match: found.match,
      group: found.group,
      class: classText(q.class !== CLASS_ANY ? q.class : rule.qclass),
      type: typeText(q.type !== TYPE_ANY ? q.type : rule.qtype),
      question: { name: q.name, type: q.type, class: q.class },
      remote,
      meta,
    };
    return { kind: "match", data };
  }
  const falls = rule.fallthrough !== undefined && matchZone(qname, rule.fallthrough) !== undefined;
  return falls ? { kind: "next" } : { kind: "servfail" };
}

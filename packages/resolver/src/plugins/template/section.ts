import { typeByName } from "../../plugin/pkg/mnemonics.js";
import { TEXT_TYPES } from "./rr-parse.js";
import type { ParsedTemplate } from "./tmpl-ast.js";
import { literalText } from "./tmpl-ast.js";
import { TemplateSyntaxError } from "./tmpl-lex.js";
import { parseTemplate, UnsupportedTemplate } from "./tmpl-parse.js";

export type Section = "answer" | "additional" | "authority";

/** Why a section's template was refused; the message follows upstream's `could not compile template: X, `. */
export class SectionError extends Error {}

/** Record types that are also class names, so a bare token of that spelling says nothing. */
const ALSO_CLASSES = new Set(["ANY", "NONE"]);

/**
 * Parses one answer/additional/authority template. Besides Go's own syntax errors, it refuses what this
 * implementation would answer differently: template features it does not run, and record types (spelled
 * out in the template's text, outside quotes) whose rdata it cannot read from text.
 */
export function compileSection(name: Section, text: string): ParsedTemplate {
  let tmpl: ParsedTemplate;
  try {
    tmpl = parseTemplate(name, text);
  } catch (err) {
    if (err instanceof TemplateSyntaxError) throw new SectionError(err.message);
    if (err instanceof UnsupportedTemplate)
      throw new SectionError(`${err.message} is not supported by this implementation`);
    throw err;
  }
  const literal = literalText(tmpl.nodes);
  if (literal.includes("\\#")) return tmpl;
  const unquoted = literal.replace(/"(?:[^"\\]|\\.)*"?/g, " ");
  const odd = unquoted
    .split(/[\s()]+/)
    .find(
      (w) =>
        w === w.toUpperCase() && typeByName(w) !== undefined && !TEXT_TYPES.has(w) && !ALSO_CLASSES.has(w),
    );
  if (odd !== undefined) throw new SectionError(`RR type ${odd} is not supported by this implementation`);
  return tmpl;
}

import type { ResourceRecord } from "../../wire/message.js";
import type { TemplateMetrics } from "./metrics.js";
import { parseTemplatedRR } from "./rr-parse.js";
import type { ParsedTemplate } from "./tmpl-ast.js";
import type { TemplateData } from "./tmpl-exec.js";
import { executeTemplate } from "./tmpl-exec.js";

/** The labels every failure counter shares; `server` is CoreDNS's `dns://:53` form, there is no view. */
export interface FailureLabels {
  server: string;
  zone: string;
  class: string;
  type: string;
}

/**
 * Runs one section template and reads its output as a record. A template that fails to run counts as a
 * template failure, text that is no record as an RR failure; both are labelled with the template written
 * back out (Go's tree String()), so the metric points at the Corefile line.
 */
export function renderRecord(
  tmpl: ParsedTemplate,
  data: TemplateData,
  labels: FailureLabels,
  metrics: TemplateMetrics,
): ResourceRecord {
  const { server, zone, class: cls, type } = labels;
  // In the family's label order, which is the order the exposition prints them in.
  const series = { server, zone, view: "", class: cls, type, section: tmpl.name, template: tmpl.text };
  let text: string;
  try {
    text = executeTemplate(tmpl, data);
  } catch (err) {
    metrics.templateFailures.inc(series);
    throw err;
  }
  let rr: ResourceRecord | undefined;
  try {
    rr = parseTemplatedRR(text);
  } catch (err) {
    metrics.rrFailures.inc(series);
    throw err;
  }
  if (!rr) {
    // miekg returns no record and no error here, and upstream then fails on the missing record.
    metrics.rrFailures.inc(series);
    throw new Error(`dns: no record in ${JSON.stringify(text)}`);
  }
  return rr;
}

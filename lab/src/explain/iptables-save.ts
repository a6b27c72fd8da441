// `iptables-save` output made ready for the proxier's FakeIPTables: only the filter and nat tables (the only
// ones kube-proxy's packet path uses), and without the rules whose target neither the fake nor the tracer
// knows (a LOG, a TCPMSS another program added). Each rule left out is named, so nothing is dropped silently.
import { BUILTIN_TARGETS } from "@switchyard/proxier/trace";

export interface SavedTables {
  /** iptables-restore input for the filter and nat tables. */
  restore: string;
  /** Lines left out, with why. */
  skipped: string[];
}

const tracedTables = new Set(["filter", "nat"]);

/** The chain a rule jumps to (`-j X`, `-g X`). */
function targetOf(rule: string): string | undefined {
  return /(?:^| )-[jg] (\S+)/.exec(rule)?.[1];
}

export function savedTables(text: string): SavedTables {
  const out: string[] = [];
  const skipped: string[] = [];
  let table: string | undefined;
  let section: string[] = [];
  let chains = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("*")) {
      table = line.slice(1);
      section = [line];
      chains = new Set();
      continue;
    }
    if (table === undefined || !tracedTables.has(table)) continue;
    if (line === "COMMIT") {
      out.push(...section, "COMMIT");
      table = undefined;
      continue;
    }
    const chain = /^:(\S+) /.exec(line)?.[1];
    if (chain) chains.add(chain);
    const target = line.startsWith("-A ") ? targetOf(line) : undefined;
    if (target !== undefined && !BUILTIN_TARGETS.has(target) && !chains.has(target)) {
      skipped.push(`${table}: ${line} (target ${target} is not followed)`);
      continue;
    }
    section.push(line);
  }
  if (out.length === 0) throw new Error("not iptables-save output: no *filter or *nat table");
  return { restore: `${out.join("\n")}\n`, skipped };
}

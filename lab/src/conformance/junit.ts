/** One spec of an e2e run, as ginkgo's JUnit report records it. */
export interface SpecResult {
  /** The spec's full text without ginkgo's `[It] ` prefix: `[sig-network] Services should ...`. */
  name: string;
  status: "passed" | "failed" | "skipped";
  seconds: number;
  /** The failure's first line, for failed specs. */
  reason?: string;
}

const entities: Record<string, string> = { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'" };

/** XML character references and the five named entities, as a JUnit writer escapes attribute values. */
export function xmlText(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
    if (ref.startsWith("#x") || ref.startsWith("#X"))
      return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith("#")) return String.fromCodePoint(Number(ref.slice(1)));
    return entities[ref] ?? whole;
  });
}

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? xmlText(m[1] ?? "") : undefined;
};

/**
 * The specs of a ginkgo v2 JUnit report (`--ginkgo.junit-report`): each `<testcase>` with its status attribute
 * (ginkgo writes passed, skipped, failed, pending, panicked, interrupted, timedout), leaving out the suite's own
 * setup and report nodes (`[SynchronizedBeforeSuite]`, `[ReportAfterSuite]`...). Anything that is not passed or
 * skipped counts as failed, with the first line of its failure message.
 */
export function parseJunit(xml: string): SpecResult[] {
  const out: SpecResult[] = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const tag = m[1] ?? "";
    const name = attr(tag, "name") ?? "";
    if (!name.startsWith("[It] ")) continue;
    const raw = attr(tag, "status") ?? "";
    const status =
      raw === "passed" ? "passed" : raw === "skipped" || raw === "pending" ? "skipped" : "failed";
    const result: SpecResult = { name: name.slice(5), status, seconds: Number(attr(tag, "time") ?? 0) };
    if (status === "failed") {
      const failure = /<(?:failure|error)\b([^>]*)>/.exec(m[2] ?? "")?.[1] ?? "";
      const message = (attr(failure, "message") ?? raw).trim();
      result.reason = message.split("\n")[0]?.trim() || raw;
    }
    out.push(result);
  }
  return out;
}

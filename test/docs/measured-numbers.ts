/**
 * The measured numbers of a Markdown page that carry no command and date. Pure: text in, problems out.
 *
 * What counts as a measured number: a duration, size or rate (a number, a range such as `34-46`, or a number
 * word such as "ten", then s, ms, µs, us, min, minutes, seconds, hours, KiB, MiB, GiB, KB, MB, GB, req/s or qps)
 * right after words that report an observation: took, takes, take, taking, ready in, about, around, nearly,
 * roughly, `~`. A bare "15 s" stays out on purpose: most of those are settings (a lease of 15 s, a timeout of
 * 120 s), and no wording tells them from a measurement, so checking them would raise false alarms.
 *
 * What counts as carrying a command and a date: the paragraph the number is in, or, when code blocks (a run's
 * output) stand right before that paragraph, those blocks and the prose paragraph that introduces them, holds a date written YYYY-MM-DD and a command (an
 * inline code span or a code-block line that starts with a program: `npx`, `npm`, `sudo`, `node`, `bash`,
 * `kubectl`, `docker`, `du`, `time`, `switchyard-lab`, `hyperfine`, `dnsperf`, `go`, or a test or bench file,
 * `*.test.ts` or `*.bench.ts`, which is what ran); or it links a results page (`bench/results/<name>.md`) that
 * itself carries a date. A paragraph is lines between blank lines: a table
 * or a list without blank lines is one paragraph. Code blocks are output, not prose: their numbers are not read.
 */
export interface NumberProblem {
  /** 1-based line of the page where the number is. */
  readonly line: number;
  /** The words that made it a measurement, as written: "took 18 s". */
  readonly text: string;
}

/** Whether a cited results page (a path relative to the repository) exists and carries a date. */
export type DatedPage = (path: string) => boolean;

const unit = String.raw`(?:s|ms|µs|us|min|minutes?|seconds?|hours?|KiB|MiB|GiB|KB|MB|GB|req/s|qps)`;
const numberWords = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty";
const value = String.raw`(?:\d[\d,]*(?:\.\d+)?(?:\s?[-–]\s?\d[\d,]*(?:\.\d+)?)?|${numberWords})`;
const measured = new RegExp(
  String.raw`(?:\b(?:took|takes|take|taking|ready in|about|around|nearly|roughly)\s+|~\s*)${value}\s?${unit}(?![\w/])`,
  "gi",
);
const date = /\b20\d\d-[01]\d-[0-3]\d\b/;
const program =
  /^(?:sudo |npx |npm |node |bash |kubectl |docker |du |time |switchyard-lab|hyperfine|dnsperf|go |\S+\.(?:test|bench)\.ts$)/;
const resultsPage = /bench\/results\/[\w.-]+\.md/g;
const fence = /^\s*(`{3,}|~{3,})/;

interface Block {
  kind: "prose" | "code" | "heading";
  /** 1-based line of its first line. */
  line: number;
  lines: string[];
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    const open = fence.exec(raw);
    if (open) {
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? "").trim().startsWith(open[1] ?? "```"); i++)
        body.push(lines[i] ?? "");
      out.push({ kind: "code", line: start + 1, lines: body });
    } else if (/^#{1,6}\s/.test(raw)) out.push({ kind: "heading", line: i + 1, lines: [raw] });
    else if (raw.trim() === "") continue;
    else {
      const prev = out.at(-1);
      const adjacent = prev?.kind === "prose" && prev.line + prev.lines.length === i + 1;
      if (adjacent) prev.lines.push(raw);
      else out.push({ kind: "prose", line: i + 1, lines: [raw] });
    }
  }
  return out;
}

const spans = (text: string) => [...text.matchAll(/(`+)([^`]+?)\1/g)].map((m) => (m[2] ?? "").trim());

function hasCommand(context: readonly Block[]): boolean {
  return context.some((b) =>
    b.kind === "code"
      ? b.lines.some((l) => program.test(l.trim().replace(/^\$\s+/, "")))
      : spans(b.lines.join(" ")).some((s) => program.test(s)),
  );
}

function backed(context: readonly Block[], dated: DatedPage): boolean {
  const prose = context.filter((b) => b.kind === "prose").map((b) => b.lines.join(" "));
  if (prose.some((t) => [...t.matchAll(resultsPage)].some((m) => dated(m[0])))) return true;
  return prose.some((t) => date.test(t)) && hasCommand(context);
}

/** Each measured number of the page whose paragraph (or the one before it) has no command and date. */
export function unbackedNumbers(markdown: string, dated: DatedPage): NumberProblem[] {
  const all = blocks(markdown);
  const problems: NumberProblem[] = [];
  all.forEach((block, i) => {
    if (block.kind !== "prose") return;
    // The paragraph, and the code blocks right before it with the prose paragraph that introduces them ("the
    // project's run (date, command):", the output, then what it shows); never past a heading.
    const context: Block[] = [block];
    for (let j = i - 1; j >= 0; j--) {
      const b = all[j];
      if (!b || b.kind === "heading" || (b.kind === "prose" && context.length === 1)) break;
      context.push(b);
      if (b.kind === "prose") break;
    }
    // Read on the joined paragraph, so a number wrapped over two lines is found, on the line it starts.
    const numbersIn = [...block.lines.join(" ").matchAll(measured)].map((m) => ({
      line: lineOf(block, m.index ?? 0),
      text: m[0].replace(/\s+/g, " "),
    }));
    if (numbersIn.length === 0 || backed(context, dated)) return;
    problems.push(...numbersIn);
  });
  return problems.sort((a, b) => a.line - b.line);
}

/** The page line of a character offset into a paragraph's lines joined with single spaces. */
function lineOf(block: Block, offset: number): number {
  let at = 0;
  for (const [k, l] of block.lines.entries()) {
    at += l.length + 1;
    if (offset < at) return block.line + k;
  }
  return block.line + block.lines.length - 1;
}

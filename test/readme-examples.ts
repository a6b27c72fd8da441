// The code blocks of a README that say whether they run, read from the Markdown (the packaging test runs them).
//
// The mark is the fence's info string, after the language (GitHub shows neither):
//   ```ts runs                 run as written from a blank project that installed the packed tarballs, as a .ts
//                              file under Node 24's type stripping (`node example.ts`); the next fenced block must
//                              be ```text output, holding what the example prints, compared line by line.
//   ```ts not-run: <reason>    not run, and the reason says what it needs (root, a kernel, a cluster).
// A ts/js/sh block with neither mark is an error, so a new example cannot claim to run without being run.
// Blocks with another or no language (Corefiles, synopses, tables of output) make no claim and are left alone.
import { type FencedBlock, fencedBlocks } from "./docs/markdown-code.js";

/** Languages whose blocks look like something to run, and so must say whether they do. */
const CODE_LANGUAGES = new Set([
  "ts",
  "typescript",
  "js",
  "javascript",
  "mjs",
  "sh",
  "bash",
  "shell",
  "console",
]);

export interface RunnableExample {
  /** The README line of the opening fence, for messages: `packages/kube/README.md:69`. */
  readonly where: string;
  readonly code: string;
  readonly expected: string;
}

export interface ReadmeExamples {
  readonly runnable: RunnableExample[];
  /** `where: reason` of each block marked not-run. */
  readonly notRun: string[];
  /** Blocks whose marks are wrong; must be empty. */
  readonly errors: string[];
}

export function readmeExamples(markdown: string, file: string): ReadmeExamples {
  const blocks = fencedBlocks(markdown);
  const runnable: RunnableExample[] = [];
  const notRun: string[] = [];
  const errors: string[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as FencedBlock;
    const where = `${file}:${block.line}`;
    if (block.info === "runs") {
      const output = blocks[i + 1];
      if (block.language !== "ts") errors.push(`${where}: only ts blocks can be marked runs`);
      else if (output?.language !== "text" || output.info !== "output")
        errors.push(`${where}: a block marked runs must be followed by a \`\`\`text output block`);
      else runnable.push({ where, code: `${block.body}\n`, expected: output.body });
      i++;
    } else if (block.info.startsWith("not-run:") && block.info.length > "not-run:".length) {
      notRun.push(`${where}: ${block.info.slice("not-run:".length).trim()}`);
    } else if (block.info === "output") {
      errors.push(`${where}: an output block with no block marked runs before it`);
    } else if (CODE_LANGUAGES.has(block.language)) {
      errors.push(`${where}: say \`${block.language} runs\` or \`${block.language} not-run: <reason>\``);
    } else if (block.info !== "") {
      errors.push(`${where}: unknown mark "${block.info}"`);
    }
  }
  return { runnable, notRun, errors };
}

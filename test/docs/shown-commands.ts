/**
 * The commands a snippet of code shows: `switchyard-lab ...` (also after `npx`, `sudo`, or as
 * `lab/bin/switchyard-lab.js`) and `npm run ...` / `npm test`, each cut into words as a shell would, up to the
 * end of the command (a pipe, `;`, `&&`, `)`, a redirection or a `#` comment). A snippet can show several: a
 * comment's "or: npx switchyard-lab up --runtime kind" is one too. Pure: text in, commands out.
 */
export type ShownCommand =
  | { readonly kind: "lab"; readonly words: readonly string[] }
  | {
      readonly kind: "npm";
      readonly script: string;
      readonly args: readonly string[];
      /** Flags npm reads itself because no `--` came before them (`npm run lab --nodes 5`): the script never sees them. */
      readonly npmFlags: readonly string[];
      /** `-w NAME` / `--workspace NAME`, or the folder of a `cd DIR &&` before it on the line. */
      readonly workspace?: string;
      readonly dir?: string;
    };

const labStart =
  /(?<=^|[\s("'`;|&])(?:sudo\s+(?:-E\s+)?)?(?:(?:npx|node)\s+)?(?:[\w./-]*bin\/)?switchyard-lab(?:\.js)?(?=$|[\s)"';|&])/g;
const npmStart = /(?<=^|[\s("'`;|&])npm\s+(?:run(?:-script)?|test\b|t\b)/g;

/**
 * Shell words from `text` at `from`, up to the end of the command. Quotes group and are removed; unquoted
 * brackets of a synopsis (`[--nodes 3]`) are dropped; `a|b` without spaces is one word (a synopsis's choices),
 * while ` | ` ends the command; `<a placeholder>` is one word.
 */
export function shellWords(text: string, from = 0): string[] {
  const words: string[] = [];
  let i = from;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] ?? "")) i++;
    const c = text[i];
    if (c === undefined || "|;&)#`>(".includes(c) || /^\d>/.test(text.slice(i, i + 2))) return words;
    if (c === "<" && /^<\s/.test(text.slice(i, i + 2))) return words;
    let word = "";
    let quoted = false;
    while (i < text.length) {
      const ch = text[i] ?? "";
      if (/\s/.test(ch) || ";&)`".includes(ch)) break;
      if (ch === "'" || ch === '"') {
        const close = text.indexOf(ch, i + 1);
        const end = close < 0 ? text.length : close;
        word += text.slice(i + 1, end);
        quoted = true;
        i = end + 1;
        continue;
      }
      // A synopsis placeholder may hold spaces: `<leader pod>`.
      if (ch === "<" && /^<[a-z]/i.test(text.slice(i, i + 2)) && text.indexOf(">", i) > 0) {
        const end = text.indexOf(">", i);
        word += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (ch === "\\" && i + 1 < text.length) {
        word += text[i + 1];
        i += 2;
        continue;
      }
      if (ch !== "[" && ch !== "]") word += ch;
      i++;
    }
    if (word !== "" || quoted) words.push(word);
  }
}

/** Synopsis filler that is not part of any command line: `...`, `[flags]`. */
function isFiller(word: string): boolean {
  return word === "..." || word === "flags" || word === "…";
}

/** npm's own flags that may stand anywhere in `npm run`: they are npm's, never the script's. */
const npmOwnFlags = new Set(["-s", "--silent", "-q", "--quiet", "--if-present", "--ignore-scripts"]);

function npmCommand(text: string, at: number, matched: string): ShownCommand | undefined {
  const words = shellWords(text, at + matched.length);
  const isRun = /^npm\s+run/.test(matched);
  let workspace: string | undefined;
  let script: string | undefined = isRun ? undefined : "test";
  const args: string[] = [];
  const npmFlags: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "--") {
      args.push(...words.slice(i + 1));
      break;
    }
    if (w === "-w" || w === "--workspace") workspace = words[++i];
    else if (w.startsWith("--workspace=")) workspace = w.slice("--workspace=".length);
    else if (w.startsWith("-")) {
      if (!npmOwnFlags.has(w)) npmFlags.push(w);
    } else if (script === undefined) script = w;
    else if (isRun) args.push(w);
  }
  if (script === undefined) return undefined;
  const dir = /(?:^|[\s;&(])cd\s+(\S+)\s*&&[^&]*$/.exec(text.slice(0, at))?.[1];
  return {
    kind: "npm",
    script,
    args: args.filter((a) => !isFiller(a)),
    npmFlags,
    ...(workspace ? { workspace } : {}),
    ...(dir ? { dir } : {}),
  };
}

/** Every command `text` shows, in order. */
export function shownCommands(text: string): ShownCommand[] {
  const found: Array<{ at: number; command: ShownCommand }> = [];
  for (const m of text.matchAll(labStart)) {
    const words = shellWords(text, m.index + m[0].length).filter((w) => !isFiller(w));
    found.push({ at: m.index, command: { kind: "lab", words } });
  }
  for (const m of text.matchAll(npmStart)) {
    const command = npmCommand(text, m.index, m[0]);
    if (command) found.push({ at: m.index, command });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.command);
}

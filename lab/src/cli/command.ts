/**
 * The shape of the command table (commands.ts): every command as data. Help, the usage line of an error, shell
 * completion and "did you mean" are all read from these records, and main.ts dispatches from them, so a flag
 * exists in help exactly when the parser accepts it.
 */

/** A flag: `--name VALUE`, or a boolean `--name` when it has no `value`. */
export interface FlagSpec {
  /** Without dashes: "state-dir". */
  readonly name: string;
  /** The placeholder of its value in help ("DIR", "N"); absent for a boolean flag. */
  readonly value?: string;
  /** The values it takes; anything else is refused (with a suggestion), and completion offers them. */
  readonly choices?: readonly string[];
  /** May be given more than once; every value is kept, in order. */
  readonly multiple?: boolean;
  /** What applies when it is not given, as help shows it ("3", "~/.local/state/switchyard/lab"). */
  readonly default?: string;
  /** One line (or two) for help. */
  readonly help: string;
  /**
   * What shell completion offers for its value when it has no choices: folders, files, or words to start the
   * value with (`--set`'s keys, "pods="), which are not checked.
   */
  readonly complete?: "dir" | "file" | readonly string[];
}

/** A positional argument. */
export interface ArgSpec {
  /** As help writes it: "COMPONENT", "OURS". */
  readonly name: string;
  readonly help: string;
  readonly optional?: boolean;
  /** Takes every remaining argument (the last one only). */
  readonly variadic?: boolean;
  /** Words shell completion offers for it. */
  readonly choices?: () => readonly string[];
}

/** What a command's run function gets: the flags and arguments as typed, already checked against its table. */
export interface Invocation {
  /** The words that named the command: ["controlplane", "up"]. */
  readonly path: readonly string[];
  readonly positionals: readonly string[];
  /** What follows `--` (or everything, for a command that passes its arguments through). */
  readonly passthrough: readonly string[];
  /** A string flag's last value, or undefined when not given. */
  string(name: string): string | undefined;
  /** A boolean flag: true when given (`--keep`, `--keep=true`). */
  bool(name: string): boolean;
  /** Every value of a repeatable flag, or undefined when not given. */
  list(name: string): string[] | undefined;
}

export type RunFunction = (inv: Invocation) => Promise<number>;

/**
 * `passthrough: "all"` hands every argument to `run` untouched (`kubectl`: its own flags are kubectl's), except a
 * lone `--help`/`-h`; `"after-dashdash"` parses the flags before `--` and hands the rest over (`conformance`).
 */
export type Passthrough = "all" | "after-dashdash";

export interface Command {
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** Paragraphs for `help CMD`; the summary when absent. */
  readonly description?: string;
  /** How the usage line writes the command when the generated one ("<path> ARGS [flags]") says too little. */
  readonly synopsis?: string;
  readonly flags?: readonly FlagSpec[];
  readonly args?: readonly ArgSpec[];
  /** Lines for help's Examples; a line starting with "#" is a comment on the next. */
  readonly examples?: readonly string[];
  readonly subcommands?: readonly Command[];
  readonly passthrough?: Passthrough;
  /** Absent on a command that only groups others (`controlplane`): naming it alone prints its help. */
  readonly run?: RunFunction;
  /** The heading it is listed under in the top-level help. */
  readonly group?: string;
}

import type { BranchNode, Command, Operand, ParsedTemplate, Pipeline, TemplateNode } from "./tmpl-ast.js";
import { commandText, operandText } from "./tmpl-ast.js";
import { truth } from "./tmpl-compare.js";
import { asString, FUNCTIONS } from "./tmpl-funcs.js";
import type { Value } from "./tmpl-value.js";
import { ExecError, goType, int, NONE, printValue, str } from "./tmpl-value.js";

/** What upstream's templateData offers: the question, the regex match, the client and the metadata. */
export interface TemplateData {
  zone: string;
  name: string;
  regex: string;
  match: readonly string[];
  group: ReadonlyMap<string, string>;
  class: string;
  type: string;
  question: { name: string; type: number; class: number };
  remote: string;
  meta(name: string): string;
}

export class TemplateExecError extends Error {}

/** A run of one template: its variables (`$` first) live on a stack, as in Go's exec state. */
interface State {
  tmpl: ParsedTemplate;
  data: TemplateData;
  vars: { name: string; value: Value }[];
}

/** `{{break}}` and `{{continue}}` unwind to the innermost range. */
class LoopSignal {
  constructor(readonly kind: "break" | "continue") {}
}

const DATA: Value = { t: "data" };

/** Runs a parsed template; a failure reads as Go's (`template: answer:1:26: executing "answer" at <...>: ...`). */
export function executeTemplate(tmpl: ParsedTemplate, data: TemplateData): string {
  return runNodes({ tmpl, data, vars: [{ name: "$", value: DATA }] }, tmpl.nodes, DATA);
}

function runNodes(s: State, nodes: readonly TemplateNode[], dot: Value): string {
  let out = "";
  for (const node of nodes) {
    switch (node.kind) {
      case "text":
        out += node.text;
        break;
      case "break":
      case "continue":
        throw new LoopSignal(node.kind);
      case "action": {
        const value = pinned(s, node.pipe, node.pos, () => evalPipeline(s, node.pipe, dot));
        if (!node.pipe.decl) out += pinned(s, node.pipe, node.pos, () => printValue(value));
        break;
      }
      case "range":
        out += runRange(s, node, dot);
        break;
      default: {
        // `if` and `with`: variables declared in the pipeline or the branch end with it.
        const mark = s.vars.length;
        const value = pinned(s, node.pipe, node.pos, () => evalPipeline(s, node.pipe, dot));
        if (truth(value)) out += runNodes(s, node.list, node.kind === "with" ? value : dot);
        else out += runNodes(s, node.elseList ?? [], dot);
        s.vars.length = mark;
      }
    }
  }
  return out;
}

/**
 * `{{range}}` as Go runs it: a slice by index, a map by its sorted keys, an integer N as 0..N-1; nothing to
 * iterate (a missing value, an empty slice or map, 0) runs the else list. Each turn starts from the variables
 * the range itself declared.
 */
function runRange(s: State, node: BranchNode, dot: Value): string {
  const mark = s.vars.length;
  const value = pinned(s, node.pipe, node.pos, () => evalPipeline(s, node.pipe, dot));
  const turns = pinned(s, node.pipe, node.pos, () => rangeTurns(value, node.pipe.decl?.length ?? 0));
  const inner = s.vars.length;
  let out = "";
  for (const [key, element] of turns) {
    const decl = node.pipe.decl ?? [];
    if (node.pipe.assign) {
      if (decl.length > 1) setVar(s, decl[0] as string, key);
      setVar(s, decl.at(-1) as string, element);
    } else if (decl.length > 0) {
      (s.vars[inner - 1] as { value: Value }).value = element;
      if (decl.length > 1) (s.vars[inner - 2] as { value: Value }).value = key;
    }
    try {
      out += runNodes(s, node.list, element);
    } catch (err) {
      if (!(err instanceof LoopSignal)) throw err;
      if (err.kind === "break") break;
    } finally {
      s.vars.length = inner;
    }
  }
  if (turns.length === 0) out += runNodes(s, node.elseList ?? [], dot);
  s.vars.length = mark;
  return out;
}

function rangeTurns(value: Value, declared: number): [Value, Value][] {
  switch (value.t) {
    case "slice":
      return value.v.map((e, i) => [int(BigInt(i)), str(e)]);
    case "map":
      return [...value.v.keys()].sort().map((k) => [str(k), str(value.v.get(k) as string)]);
    case "int": {
      if (declared > 1) throw new ExecError(`can't use ${value.v} to iterate over more than one variable`);
      const n = value.v > 0n ? Number(value.v) : 0;
      return Array.from({ length: n }, (_, i) => [NONE, int(BigInt(i), value.go)]);
    }
    case "none":
      return [];
    default:
      throw new ExecError(`range can't iterate over ${printValue(value)}`);
  }
}

/** `$x = value`: the innermost variable of that name. */
function setVar(s: State, name: string, value: Value): void {
  const v = s.vars.findLast((x) => x.name === name);
  if (!v) throw new ExecError(`undefined variable: ${name}`);
  v.value = value;
}

/** Evaluates a pipeline, turning a failure into Go's message pinned to the node that failed. */
function pinned<T>(s: State, pipe: Pipeline, pos: number, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (!(err instanceof ExecError)) throw err;
    // Without a node of its own, the error is Go's at the pipeline's first command.
    const at = err.at ?? { text: pipe.cmds.map(commandText).join(" | "), pos: pipe.cmds[0]?.pos ?? pos };
    throw new TemplateExecError(
      `template: ${location(s.tmpl, at.pos)}: executing "${s.tmpl.name}" at <${at.text}>: ${err.message}`,
    );
  }
}

/** Go's `name:line:column`, the column counted in bytes from 0. */
function location(tmpl: ParsedTemplate, pos: number): string {
  const before = tmpl.source.slice(0, pos);
  const lines = before.split("\n");
  return `${tmpl.name}:${lines.length}:${Buffer.byteLength(lines.at(-1) ?? "")}`;
}

/** The commands in turn, each getting the one before as its last argument; then the declaration. */
function evalPipeline(s: State, pipe: Pipeline, dot: Value): Value {
  let value: Value | undefined;
  for (const cmd of pipe.cmds) value = evalCommand(s, cmd, dot, value);
  const result = value ?? NONE;
  for (const name of pipe.decl ?? []) {
    if (pipe.assign) setVar(s, name, result);
    else s.vars.push({ name, value: result });
  }
  return result;
}

/** A command's first operand decides: a function or the Meta method is called, anything else is a value. */
function evalCommand(s: State, cmd: Command, dot: Value, piped: Value | undefined): Value {
  const [first, ...rest] = cmd.args as [Operand, ...Operand[]];
  const args = () => [...rest.map((a) => evalArg(s, a, dot)), ...(piped ? [piped] : [])];
  const at = { text: commandText(cmd), pos: cmd.pos };
  const hasArgs = rest.length > 0 || piped !== undefined;
  try {
    if (first.kind === "ident" && (first.name === "and" || first.name === "or"))
      return andOr(s, first.name, rest, dot, piped);
    if (first.kind === "ident") return (FUNCTIONS[first.name] as (a: readonly Value[]) => Value)(args());
    if (first.kind === "field" || (first.kind === "variable" && first.path.length > 0))
      return evalChain(s, first, dot, hasArgs ? args() : undefined);
  } catch (err) {
    if (err instanceof ExecError && !err.at)
      throw new ExecError(err.message, err.atFunction ? { text: operandText(first), pos: first.pos } : at);
    throw err;
  }
  if (hasArgs) throw new ExecError(`can't give argument to non-function ${operandText(first)}`, at);
  return evalArg(s, first, dot);
}

/**
 * `and` and `or` as Go runs them: arguments are evaluated in turn and the first that decides is returned
 * (false for `and`, true for `or`), so a later argument that would fail is never run; otherwise the last.
 */
function andOr(
  s: State,
  name: "and" | "or",
  rest: readonly Operand[],
  dot: Value,
  piped: Value | undefined,
): Value {
  const count = rest.length + (piped ? 1 : 0);
  if (count === 0)
    throw new ExecError(`wrong number of args for ${name}: want at least 1 got 0`, undefined, true);
  let value: Value = NONE;
  for (const op of rest) {
    value = evalArg(s, op, dot);
    if (truth(value) === (name === "or")) return value;
  }
  return piped ?? value;
}

function evalArg(s: State, op: Operand, dot: Value): Value {
  switch (op.kind) {
    case "string":
      return str(op.value);
    case "number":
      return int(op.value);
    case "bool":
      return { t: "bool", v: op.value };
    case "pipe":
      return evalPipeline(s, op.pipe, dot);
    case "ident":
      return (FUNCTIONS[op.name] as (a: readonly Value[]) => Value)([]);
    case "dot":
      return dot;
    case "field":
    case "variable":
      return evalChain(s, op, dot, undefined);
  }
}

/**
 * A field chain from `.` or from a variable; `args` go to the last element, which must then be the data's
 * Meta method.
 */
function evalChain(
  s: State,
  op: Extract<Operand, { kind: "field" | "variable" }>,
  dot: Value,
  args: Value[] | undefined,
): Value {
  const at = { text: operandText(op), pos: op.pos };
  let value: Value = op.kind === "field" ? dot : variable(s, op.name);
  op.path.forEach((name, i) => {
    const last = i === op.path.length - 1;
    if (value.t === "data" && name === "Meta") {
      const given = last ? (args ?? []) : [];
      if (given.length !== 1)
        throw new ExecError(`wrong number of args for Meta: want 1 got ${given.length}`, at);
      value = str(s.data.meta(asString(given[0] as Value)));
      return;
    }
    if (last && args) throw new ExecError(`${name} has arguments but cannot be invoked as function`, at);
    value = fieldOf(value, name, s.data, at);
  });
  return value;
}

function variable(s: State, name: string): Value {
  const v = s.vars.findLast((x) => x.name === name);
  if (!v) throw new ExecError(`undefined variable: ${name}`);
  return v.value;
}

function fieldOf(from: Value, name: string, data: TemplateData, at: { text: string; pos: number }): Value {
  if (from.t === "data") {
    const v = dataField(data, name);
    if (v) return v;
    throw new ExecError(`can't evaluate field ${name} in type *template.templateData`, at);
  }
  if (from.t === "map") return from.v.has(name) ? str(from.v.get(name) as string) : NONE;
  if (from.t === "question") {
    if (name === "Name") return str(data.question.name);
    if (name === "Qtype") return int(BigInt(data.question.type), "uint16");
    if (name === "Qclass") return int(BigInt(data.question.class), "uint16");
  }
  if (from.t === "none") throw new ExecError(`nil data; no entry for key "${name}"`, at);
  const type = from.t === "question" ? "dns.Question" : goType(from);
  throw new ExecError(`can't evaluate field ${name} in type ${type}`, at);
}

function dataField(data: TemplateData, name: string): Value | undefined {
  switch (name) {
    case "Zone":
      return str(data.zone);
    case "Name":
      return str(data.name);
    case "Regex":
      return str(data.regex);
    case "Class":
      return str(data.class);
    case "Type":
      return str(data.type);
    case "Remote":
      return str(data.remote);
    case "Match":
      return { t: "slice", v: data.match };
    case "Group":
      return { t: "map", v: data.group };
    case "Question":
      return { t: "question" };
    default:
      return undefined;
  }
}

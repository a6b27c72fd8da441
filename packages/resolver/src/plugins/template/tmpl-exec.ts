import type { Command, Operand, ParsedTemplate, Pipeline, TemplateNode } from "./tmpl-ast.js";
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

/** Runs a parsed template; a failure reads as Go's (`template: answer:1:26: executing "answer" at <...>: ...`). */
export function executeTemplate(tmpl: ParsedTemplate, data: TemplateData): string {
  return runNodes(tmpl, tmpl.nodes, data);
}

function runNodes(tmpl: ParsedTemplate, nodes: readonly TemplateNode[], data: TemplateData): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") {
      out += node.text;
      continue;
    }
    const value = pinned(tmpl, node.pipe, node.pos, () => evalPipeline(node.pipe, data));
    if (node.kind === "action") out += printValue(value);
    else out += runNodes(tmpl, truth(value) ? node.list : (node.elseList ?? []), data);
  }
  return out;
}

/** Evaluates a pipeline, turning a failure into Go's message pinned to the node that failed. */
function pinned(tmpl: ParsedTemplate, pipe: Pipeline, pos: number, run: () => Value): Value {
  try {
    return run();
  } catch (err) {
    if (!(err instanceof ExecError)) throw err;
    const at = err.at ?? { text: pipe.cmds.map(commandText).join(" | "), pos };
    throw new TemplateExecError(
      `template: ${location(tmpl, at.pos)}: executing "${tmpl.name}" at <${at.text}>: ${err.message}`,
    );
  }
}

/** Go's `name:line:column`, the column counted in bytes from 0. */
function location(tmpl: ParsedTemplate, pos: number): string {
  const before = tmpl.source.slice(0, pos);
  const lines = before.split("\n");
  return `${tmpl.name}:${lines.length}:${Buffer.byteLength(lines.at(-1) ?? "")}`;
}

function evalPipeline(pipe: Pipeline, data: TemplateData): Value {
  let value: Value | undefined;
  for (const cmd of pipe.cmds) value = evalCommand(cmd, data, value);
  return value ?? NONE;
}

/** A command's first operand decides: a function or the Meta method is called, anything else is a value. */
function evalCommand(cmd: Command, data: TemplateData, piped: Value | undefined): Value {
  const [first, ...rest] = cmd.args as [Operand, ...Operand[]];
  const args = () => [...rest.map((a) => evalArg(a, data)), ...(piped ? [piped] : [])];
  const at = { text: commandText(cmd), pos: cmd.pos };
  const hasArgs = rest.length > 0 || piped !== undefined;
  try {
    if (first.kind === "ident" && (first.name === "and" || first.name === "or"))
      return andOr(first.name, rest, data, piped);
    if (first.kind === "ident") return (FUNCTIONS[first.name] as (a: readonly Value[]) => Value)(args());
    if (first.kind === "field") return evalField(first, data, hasArgs ? args() : undefined);
  } catch (err) {
    if (err instanceof ExecError && !err.at)
      throw new ExecError(err.message, err.atFunction ? { text: operandText(first), pos: first.pos } : at);
    throw err;
  }
  if (hasArgs) throw new ExecError(`can't give argument to non-function ${operandText(first)}`, at);
  return evalArg(first, data);
}

/**
 * `and` and `or` as Go runs them: arguments are evaluated in turn and the first that decides is returned
 * (false for `and`, true for `or`), so a later argument that would fail is never run; otherwise the last.
 */
function andOr(
  name: "and" | "or",
  rest: readonly Operand[],
  data: TemplateData,
  piped: Value | undefined,
): Value {
  const count = rest.length + (piped ? 1 : 0);
  if (count === 0)
    throw new ExecError(`wrong number of args for ${name}: want at least 1 got 0`, undefined, true);
  let value: Value = NONE;
  for (const op of rest) {
    value = evalArg(op, data);
    if (truth(value) === (name === "or")) return value;
  }
  return piped ?? value;
}

function evalArg(op: Operand, data: TemplateData): Value {
  switch (op.kind) {
    case "string":
      return str(op.value);
    case "number":
      return int(op.value);
    case "bool":
      return { t: "bool", v: op.value };
    case "pipe":
      return evalPipeline(op.pipe, data);
    case "ident":
      return (FUNCTIONS[op.name] as (a: readonly Value[]) => Value)([]);
    case "field":
      return evalField(op, data, undefined);
  }
}

/** A field chain from the data; `args` go to the last element, which must then be the Meta method. */
function evalField(
  op: Extract<Operand, { kind: "field" }>,
  data: TemplateData,
  args: Value[] | undefined,
): Value {
  const at = { text: operandText(op), pos: op.pos };
  let value: Value | "data" = "data";
  op.path.forEach((name, i) => {
    const last = i === op.path.length - 1;
    if (value === "data" && name === "Meta") {
      const given = last ? (args ?? []) : [];
      if (given.length !== 1)
        throw new ExecError(`wrong number of args for Meta: want 1 got ${given.length}`, at);
      value = str(data.meta(asString(given[0] as Value)));
      return;
    }
    if (last && args) throw new ExecError(`${name} has arguments but cannot be invoked as function`, at);
    value = fieldOf(value, name, data, at);
  });
  return value === "data" ? NONE : value;
}

function fieldOf(
  from: Value | "data",
  name: string,
  data: TemplateData,
  at: { text: string; pos: number },
): Value {
  if (from === "data") {
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

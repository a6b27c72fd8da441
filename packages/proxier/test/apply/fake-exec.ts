// A scripted Exec: records every call and answers from a handler.
import { CommandNotFoundError, type Exec, type ExecResult, stdinText } from "../../src/apply/exec.js";

export interface Call {
  readonly command: string;
  readonly args: readonly string[];
  readonly stdin?: string;
}

export function fakeExec(answer: (call: Call) => Partial<ExecResult> | "missing" = () => ({})): {
  exec: Exec;
  calls: Call[];
} {
  const calls: Call[] = [];
  const exec: Exec = async (command, args, options) => {
    const call = {
      command,
      args: [...args],
      stdin: options?.stdin === undefined ? undefined : stdinText(options.stdin),
    };
    calls.push(call);
    const a = answer(call);
    if (a === "missing") throw new CommandNotFoundError(command);
    return { code: 0, stdout: "", stderr: "", ...a };
  };
  return { exec, calls };
}

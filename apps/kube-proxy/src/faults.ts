// Test-only fault injection, so the real-kernel tests can make the kernel "refuse" a sync.
// SWITCHYARD_PROXY_FAULTS names a file holding a count; while it is above zero, each rule
// write (`nft -f`, `*tables-restore`) fails without running and the count goes down by one.
// Unset (always, outside tests), the exec is returned untouched.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Exec } from "@switchyard/proxier";

export const FAULTS_ENV = "SWITCHYARD_PROXY_FAULTS";

function isRuleWrite(command: string, args: readonly string[]): boolean {
  return (
    /(^|\/)ip6?tables(-legacy|-nft)?-restore$/.test(command) ||
    (command.endsWith("nft") && args.includes("-f"))
  );
}

export function withInjectedFaults(exec: Exec, file = process.env[FAULTS_ENV]): Exec {
  if (file === undefined || file === "") return exec;
  return async (command, args, options) => {
    if (isRuleWrite(command, args) && existsSync(file)) {
      const left = Number(readFileSync(file, "utf8").trim());
      if (left > 0) {
        writeFileSync(file, String(left - 1));
        return { code: 1, stdout: "", stderr: `${command}: injected failure (${FAULTS_ENV})\n` };
      }
    }
    return exec(command, args, options);
  };
}

export const e2ePrograms: readonly string[];
export interface SetupPlan {
  tools: string[];
  upstream: string[] | undefined;
  labArgs: string[];
  steps: string[];
}
export function setupPlan(job: string, jobArgs: readonly string[], host: { root: boolean }): SetupPlan;
export function blockedBy(step: string, failed: ReadonlySet<string>): string | undefined;
export function afterFailure(job: string, step: string, noSkip: boolean): "go on" | "stop";

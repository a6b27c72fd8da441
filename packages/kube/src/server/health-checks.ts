/** A named check: resolve (or return) to pass, throw or reject to fail. */
export type HealthCheck = () => void | Promise<void>;

export interface CheckResult {
  name: string;
  ok: boolean;
  error?: string;
}

/**
 * Named checks for one endpoint (/livez or /readyz), reported the way the
 * Kubernetes components do: "ok", or with ?verbose one "[+]name ok" or
 * "[-]name failed: reason withheld" line per check.
 */
export class HealthChecks {
  readonly #checks = new Map<string, HealthCheck>();

  constructor(readonly endpoint: string) {}

  add(name: string, check: HealthCheck): void {
    if (this.#checks.has(name)) throw new Error(`${this.endpoint}: check "${name}" is already registered`);
    this.#checks.set(name, check);
  }

  names(): string[] {
    return [...this.#checks.keys()];
  }

  has(name: string): boolean {
    return this.#checks.has(name);
  }

  /** Runs the checks (all, or only `only`), skipping any listed in `exclude`. */
  async run(exclude: readonly string[] = [], only?: string): Promise<CheckResult[]> {
    const selected = [...this.#checks].filter(([name]) => (only ? name === only : !exclude.includes(name)));
    return Promise.all(
      selected.map(async ([name, check]): Promise<CheckResult> => {
        try {
          await check();
          return { name, ok: true };
        } catch (err) {
          return { name, ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }
}

/** The response body: "ok" unless verbose or failed. Reasons are withheld, as the apiserver does. */
export function renderResults(endpoint: string, results: CheckResult[], verbose: boolean): string {
  const ok = results.every((r) => r.ok);
  if (ok && !verbose) return "ok";
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  lines.push(ok ? `${endpoint} check passed` : `${endpoint} check failed`);
  return `${lines.join("\n")}\n`;
}

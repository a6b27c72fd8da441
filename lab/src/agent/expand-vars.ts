/**
 * The kubelet's expansion of `$(VAR)` in a container's command and args: a defined variable is replaced, an
 * undefined one is left as written, and `$$` escapes a dollar sign (so `$$(VAR)` stays literal).
 */
export function expandVars(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === "$$") return "$";
    return name !== undefined && env[name] !== undefined ? env[name] : match;
  });
}

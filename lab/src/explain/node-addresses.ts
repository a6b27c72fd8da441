/** The addresses `ip -o addr show` lists (the node's local addresses: what `fib daddr type local` matches). */
export function parseAddresses(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /\binet6? ([0-9a-fA-F.:]+)\/\d+/.exec(line);
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

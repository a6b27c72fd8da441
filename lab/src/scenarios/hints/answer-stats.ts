/** How evenly connections spread over n endpoints: counts, chi-square against uniform, and its p-value. */
export interface Spread {
  n: number;
  total: number;
  chiSquare: number;
  /** Probability of a chi-square at least this large if the choice were uniform. */
  pValue: number;
  /** Largest |share - 1/n|, as a fraction of 1/n. */
  maxRelativeDeviation: number;
}

export function spread(counts: readonly number[]): Spread {
  const n = counts.length;
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / n;
  const chiSquare = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
  const maxRelativeDeviation = Math.max(...counts.map((c) => Math.abs(c - expected) / expected));
  return { n, total, chiSquare, pValue: chiSquareSurvival(chiSquare, n - 1), maxRelativeDeviation };
}

/** P(X ≥ x) for a chi-square with `df` degrees of freedom: the regularized upper incomplete gamma Q(df/2, x/2). */
export function chiSquareSurvival(x: number, df: number): number {
  if (df <= 0) return Number.NaN;
  if (x <= 0) return 1;
  return upperGamma(df / 2, x / 2);
}

function logGamma(z: number): number {
  // Lanczos approximation (g = 7, n = 9).
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const w = z - 1;
  let a = c[0] as number;
  const t = w + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (w + i);
  return 0.5 * Math.log(2 * Math.PI) + (w + 0.5) * Math.log(t) - t + Math.log(a);
}

function upperGamma(a: number, x: number): number {
  const lead = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    // Series for the lower part, then its complement.
    let sum = 1 / a;
    let term = sum;
    for (let k = 1; k < 500; k++) {
      term *= x / (a + k);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-15) break;
    }
    return Math.max(0, 1 - sum * lead);
  }
  // Continued fraction (modified Lentz).
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 500; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.min(1, lead * h);
}

/** "echo-a 512 (25.6%), echo-b 488 (24.4%)" */
export function formatAnswers(answers: Readonly<Record<string, number>>): string {
  const total = Object.values(answers).reduce((a, b) => a + b, 0);
  return Object.entries(answers)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([pod, n]) => `${pod} ${n} (${((n / total) * 100).toFixed(1)}%)`)
    .join(", ");
}

// Loaded into switchyard-dns with `node --import` by the memory benchmark (never in production): every
// 500 ms it appends one JSON line with process.memoryUsage() and the V8 heap spaces to the file named by
// SWITCHYARD_BENCH_PROBE. Plain JavaScript, so the server under test needs no TypeScript loader.
import { appendFileSync } from "node:fs";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

// biome-ignore lint/suspicious/noUndeclaredEnvVars: set by the memory benchmark for the server it starts; no turbo task reads it
const out = process.env.SWITCHYARD_BENCH_PROBE;
if (out) {
  const MiB = 1024 * 1024;
  const round = (n) => Math.round((n / MiB) * 10) / 10;
  appendFileSync(out, `${JSON.stringify({ heapSizeLimit: round(getHeapStatistics().heap_size_limit) })}\n`);
  const sample = () => {
    const m = process.memoryUsage();
    const spaces = {};
    for (const s of getHeapSpaceStatistics()) spaces[s.space_name] = round(s.space_size);
    const line = {
      t: Date.now(),
      rss: round(m.rss),
      heapTotal: round(m.heapTotal),
      heapUsed: round(m.heapUsed),
      external: round(m.external),
      arrayBuffers: round(m.arrayBuffers),
      spaces,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  };
  setInterval(sample, 500).unref();
}

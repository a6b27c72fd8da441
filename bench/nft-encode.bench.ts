// What the netlink writer's compile step costs next to the render: for N Services x 10 endpoints, a full nftables
// render (renderNFTables), the text `nft -f` reads (Transaction.script()) and the netlink encode
// (encodeTransaction: every rule's text compiled into expressions, the whole batch written), each in this one
// process without a kernel, median of 5 runs after a warm-up. The kernel's share of a full sync is in
// bench/results/proxier.md (`npm run bench -- proxier`). Writes bench/results/nft-encode.md.
//   npm run bench -- nft-encode [--sizes 1000,10000]
import { mkdirSync, writeFileSync } from "node:fs";
import { encodeTransaction, renderNFTables } from "@switchyard/proxier";
import { buildMaps, nftOptions } from "@switchyard/proxier/testing";
import { machineLine, median } from "./machine.js";
import { cluster } from "./proxier/render.js";

const sizesAt = process.argv.indexOf("--sizes");
const sizes = (sizesAt >= 0 ? (process.argv[sizesAt + 1] ?? "") : "1000,10000").split(",").map(Number);
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("nft-encode: --sizes takes whole numbers, e.g. --sizes 1000,10000");
  process.exit(2);
}

interface Row {
  services: number;
  renderMs: number;
  scriptMs: number;
  encodeMs: number;
  scriptMiB: number;
  batchMiB: number;
}

function timed<T>(samples: number[], work: () => T): T {
  const started = performance.now();
  const out = work();
  samples.push(performance.now() - started);
  return out;
}

function measure(n: number): Row {
  const { services, slices } = cluster(n);
  const maps = buildMaps("IPv4", services, slices);
  const options = nftOptions("IPv4", { serviceCIDRs: ["172.30.0.0/16"] });
  let named = 0;
  const namer = { next: (kind: "set" | "map") => `_${kind === "set" ? "s" : "m"}${(named++).toString(36)}` };
  const render: number[] = [];
  const script: number[] = [];
  const encode: number[] = [];
  let scriptBytes = 0;
  let batchBytes = 0;
  for (let run = 0; run <= 5; run++) {
    const out = timed(render, () => renderNFTables(options, { ...maps, now: 0 }));
    scriptBytes = timed(script, () => out.transaction.script()).length;
    batchBytes = timed(encode, () => encodeTransaction(out.transaction, namer, () => undefined)).buffer
      .length;
  }
  // The first run warms the JIT up and is not counted.
  const ms = (samples: number[]) => median(samples.slice(1));
  const MiB = 2 ** 20;
  return {
    services: n,
    renderMs: ms(render),
    scriptMs: ms(script),
    encodeMs: ms(encode),
    scriptMiB: scriptBytes / MiB,
    batchMiB: batchBytes / MiB,
  };
}

const rows = sizes.map((n) => {
  const row = measure(n);
  console.log(
    `nft-encode: ${n} Services: render ${row.renderMs.toFixed(0)} ms, script ${row.scriptMs.toFixed(0)} ms, encode ${row.encodeMs.toFixed(0)} ms`,
  );
  return row;
});
const report = [
  `# nftables: render, text and netlink encode (${new Date().toISOString().slice(0, 10)})`,
  "",
  `Machine: ${machineLine()}`,
  "Command: `npm run bench -- nft-encode`. One process, no kernel; median of 5 runs after a warm-up.",
  "",
  "| Services × 10 | full render ms | script() ms | encode ms (compile + batch) | script MiB | batch MiB |",
  "|--:|--:|--:|--:|--:|--:|",
  ...rows.map(
    (r) =>
      `| ${r.services} | ${r.renderMs.toFixed(0)} | ${r.scriptMs.toFixed(0)} | ${r.encodeMs.toFixed(0)} | ${r.scriptMiB.toFixed(1)} | ${r.batchMiB.toFixed(1)} |`,
  ),
  "",
].join("\n");
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/nft-encode.md", report);

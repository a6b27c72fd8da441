#!/usr/bin/env node
// Writes the C headers the eBPF programs include, from the compiled layout (dist/ebpf/layout.js): layout.ts is the
// one definition of every map's key and value, and the C side is derived from it at build time, never by hand.
//
//   switchyard_layout.h  every struct of layout.ts in both families (struct lb4_key, struct lb6_key, ...), each
//                        field's offset and each struct's size held by _Static_assert, and the constants.
//   switchyard_maps.h    the maps themselves (BTF-style, in the .maps section): kind, key and value struct,
//                        default size, and pinning by name for those the proxy writes and the LRU ones.
//
// Usage: node bpf/gen-layout.mjs [--out DIR]   (default: dist/bpf, under the package, gitignored)
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_OUT_DIR = join(packageDir, "dist", "bpf");
export const LAYOUT_HEADER = "switchyard_layout.h";
export const MAPS_HEADER = "switchyard_maps.h";

const FAMILIES = ["IPv4", "IPv6"];

/** The kernel's map type for each kind layout.ts names. */
const MAP_TYPES = {
  hash: "BPF_MAP_TYPE_HASH",
  lru_hash: "BPF_MAP_TYPE_LRU_HASH",
  lpm_trie: "BPF_MAP_TYPE_LPM_TRIE",
};

/** layout.ts names fields in camelCase; C names them in snake_case: revNatIndex is rev_nat_index. */
export function cFieldName(name) {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The C declaration of one field in one family: an IPv6 address is four network-order words. */
function cField(field, family) {
  const name = cFieldName(field.name);
  switch (field.type) {
    case "ip":
      return family === "IPv6" ? `__be32 ${name}[4]` : `__be32 ${name}`;
    case "be16":
      return `__be16 ${name}`;
    default:
      return `__${field.type} ${name}`;
  }
}

function cStruct(layout, struct, family) {
  const { name, size, offsets } = layout.structLayout(struct, family);
  const fields = layout.fieldsOf(struct, family);
  const lines = [`struct ${name} {`, ...fields.map((f) => `\t${cField(f, family)};`), "};"];
  lines.push(`_Static_assert(sizeof(struct ${name}) == ${size}, "${name} is ${size} bytes in layout.ts");`);
  for (const f of fields) {
    const c = cFieldName(f.name);
    lines.push(
      `_Static_assert(__builtin_offsetof(struct ${name}, ${c}) == ${offsets[f.name]}, "${name}.${c} sits at ${offsets[f.name]} in layout.ts");`,
    );
  }
  return lines.join("\n");
}

/** FLAG_NAME (1 << n) as a hexadecimal literal, one per line. */
function cFlags(prefix, flags) {
  return Object.entries(flags).map(([name, bit]) => `#define ${prefix}${name} 0x${bit.toString(16)}`);
}

export function layoutHeader(layout) {
  const constants = [
    `#define SCOPE_EXTERNAL ${layout.SCOPE_EXTERNAL}`,
    `#define SCOPE_INTERNAL ${layout.SCOPE_INTERNAL}`,
    `#define PROTO_TCP ${layout.PROTO_TCP}`,
    `#define PROTO_UDP ${layout.PROTO_UDP}`,
    `#define PROTO_SCTP ${layout.PROTO_SCTP}`,
    ...cFlags("SVC_FLAG_", layout.serviceFlags),
    ...cFlags("BACKEND_FLAG_", layout.backendFlags),
    `#define SOURCE_RANGE_KEY_BITS ${layout.SOURCE_RANGE_KEY_BITS}`,
    "",
    "/* Every struct and map below is named per family (lb4_, lb6_); a program's body is written once as LB(name)",
    " * and included once per family with LB defined as LB_NAME(lb4, name) or LB_NAME(lb6, name). */",
    "#define LB_PASTE(prefix, name) prefix##_##name",
    "#define LB_NAME(prefix, name) LB_PASTE(prefix, name)",
  ];
  const structs = FAMILIES.flatMap((family) => layout.structs.map((s) => cStruct(layout, s, family)));
  return [
    "/* Generated from packages/proxier/src/ebpf/layout.ts by bpf/gen-layout.mjs at build time: do not edit. */",
    "#ifndef SWITCHYARD_LAYOUT_H",
    "#define SWITCHYARD_LAYOUT_H",
    "",
    "#include <linux/types.h>",
    "",
    ...constants,
    "",
    structs.join("\n\n"),
    "",
    "#endif",
    "",
  ].join("\n");
}

/**
 * Pinned by name (under the loader's pin root) when the proxy writes the map, so that a restarted proxy finds its
 * entries and the programs it loads anew share them, and when it is an LRU map the programs fill, so that sockets
 * keep their reverse translation and clients their affinity across a restart.
 */
export function isPinned(spec) {
  return spec.ownedByProxy || spec.kind === "lru_hash";
}

function cMap(layout, spec, family) {
  const lines = [
    "struct {",
    `\t__uint(type, ${MAP_TYPES[spec.kind]});`,
    `\t__uint(max_entries, ${spec.defaultMaxEntries});`,
    `\t__type(key, struct ${layout.structLayout(spec.key, family).name});`,
    `\t__type(value, struct ${layout.structLayout(spec.value, family).name});`,
  ];
  const flags = layout.mapFlagsOf(spec);
  if (flags !== 0) lines.push(`\t__uint(map_flags, ${flags});`);
  if (isPinned(spec)) lines.push("\t__uint(pinning, LIBBPF_PIN_BY_NAME);");
  lines.push(`} ${layout.kernelMapName(spec, family)} SEC(".maps");`);
  return lines.join("\n");
}

export function mapsHeader(layout) {
  const maps = FAMILIES.flatMap((family) => Object.values(layout.maps).map((m) => cMap(layout, m, family)));
  return [
    "/* Generated from packages/proxier/src/ebpf/layout.ts by bpf/gen-layout.mjs at build time: do not edit. */",
    "#ifndef SWITCHYARD_MAPS_H",
    "#define SWITCHYARD_MAPS_H",
    "",
    "#include <linux/bpf.h>",
    "#include <bpf/bpf_helpers.h>",
    `#include "${LAYOUT_HEADER}"`,
    "",
    maps.join("\n\n"),
    "",
    "#endif",
    "",
  ].join("\n");
}

/** Writes both headers into `outDir` from the compiled layout; returns the directory. */
export async function generateHeaders(outDir = DEFAULT_OUT_DIR) {
  const layoutJs = join(packageDir, "dist", "ebpf", "layout.js");
  const layout = await import(pathToFileURL(layoutJs).href).catch((e) => {
    throw new Error(
      `${layoutJs}: ${e.message} (build the package's TypeScript first: tsc -p tsconfig.build.json)`,
    );
  });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, LAYOUT_HEADER), layoutHeader(layout));
  writeFileSync(join(outDir, MAPS_HEADER), mapsHeader(layout));
  return outDir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--out");
  const out = at > 0 ? process.argv[at + 1] : undefined;
  try {
    console.log(await generateHeaders(out));
  } catch (e) {
    console.error(`gen-layout: ${e.message}`);
    process.exit(1);
  }
}

// The C headers bpf/gen-layout.mjs writes from the compiled layout: every struct of layout.ts in both families,
// field by field with its C type, held to layout.ts's offsets and sizes by _Static_assert; the constants; the
// maps. Then clang compiles the programs with them, and refuses a header whose struct strays from layout.ts.
// Needs the package built (dist/ebpf/layout.js) and clang, as the build itself does.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { clangArgs } from "../bpf/build.mjs";
import { cFieldName } from "../bpf/gen-layout.mjs";
import {
  BPF_F_NO_PREALLOC,
  backendFlags,
  type Field,
  fieldsOf,
  kernelMapName,
  maps,
  PROTO_TCP,
  PROTO_UDP,
  SCOPE_INTERNAL,
  SOURCE_RANGE_KEY_BITS,
  serviceFlags,
  structLayout,
  structs,
} from "../src/ebpf/layout.js";

const MAP_TYPES = {
  hash: "BPF_MAP_TYPE_HASH",
  lru_hash: "BPF_MAP_TYPE_LRU_HASH",
  lpm_trie: "BPF_MAP_TYPE_LPM_TRIE",
} as const;

const packageDir = join(import.meta.dirname, "..");
const bpfDir = join(packageDir, "bpf");

/** The declaration layout.ts's field should have in C. */
function expectedField(f: Field, family: IPFamily): string {
  const name = cFieldName(f.name);
  if (f.type === "ip") return family === "IPv6" ? `__be32 ${name}[4]` : `__be32 ${name}`;
  if (f.type === "be16") return `__be16 ${name}`;
  return `__${f.type} ${name}`;
}

/** clang as the build runs it. */
function compile(includeDir: string, source: string, output: string) {
  return spawnSync("clang", clangArgs(source, includeDir, output), { encoding: "utf8" });
}

describe("the C headers generated from layout.ts", () => {
  let dir = "";
  let layoutH = "";
  let mapsH = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "sy-ebpf-header-"));
    execFileSync(process.execPath, [join(bpfDir, "gen-layout.mjs"), "--out", dir]);
    layoutH = readFileSync(join(dir, "switchyard_layout.h"), "utf8");
    mapsH = readFileSync(join(dir, "switchyard_maps.h"), "utf8");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const family of ["IPv4", "IPv6"] as const) {
    test(`${family}: every struct, field by field, with layout.ts's size and offsets asserted`, () => {
      for (const s of structs) {
        const { name, size, offsets } = structLayout(s, family);
        const body = new RegExp(`struct ${name} \\{\\n([^}]*)\\};`).exec(layoutH)?.[1];
        assert.ok(body, `struct ${name} is in the header`);
        const fields = body
          .split("\n")
          .map((l) => l.trim().replace(/;$/, ""))
          .filter(Boolean);
        assert.deepEqual(
          fields,
          fieldsOf(s, family).map((f) => expectedField(f, family)),
          name,
        );
        assert.ok(
          layoutH.includes(`_Static_assert(sizeof(struct ${name}) == ${size},`),
          `${name}: size ${size}`,
        );
        for (const f of fieldsOf(s, family)) {
          const at = `__builtin_offsetof(struct ${name}, ${cFieldName(f.name)}) == ${offsets[f.name]}`;
          assert.ok(layoutH.includes(at), `${name}.${f.name} at ${offsets[f.name]}`);
        }
      }
    });

    test(`${family}: every map with its kind, key, value, default size and pinning`, () => {
      for (const spec of Object.values(maps)) {
        const name = kernelMapName(spec, family);
        const def = new RegExp(`struct \\{\\n([^}]*)\\} ${name} SEC\\("\\.maps"\\);`).exec(mapsH)?.[1] ?? "";
        assert.ok(def, `map ${name} is defined`);
        assert.ok(def.includes(`__uint(type, ${MAP_TYPES[spec.kind]});`), name);
        // An LPM trie exists only without preallocation; the other maps take no flags.
        const flags = spec.kind === "lpm_trie" ? `\t__uint(map_flags, ${BPF_F_NO_PREALLOC});` : "map_flags";
        assert.equal(def.includes(flags), spec.kind === "lpm_trie", name);
        assert.ok(def.includes(`__type(key, struct ${structLayout(spec.key, family).name});`), name);
        assert.ok(def.includes(`__type(value, struct ${structLayout(spec.value, family).name});`), name);
        assert.ok(def.includes(`__uint(max_entries, ${spec.defaultMaxEntries});`), name);
        // Every map of today's layout is either the proxy's or an LRU one: all are pinned.
        assert.ok(def.includes("__uint(pinning, LIBBPF_PIN_BY_NAME);"), `${name} is pinned`);
      }
    });
  }

  test("the constants, with layout.ts's values", () => {
    assert.equal(Number(/#define SOURCE_RANGE_KEY_BITS (\S+)/.exec(layoutH)?.[1]), SOURCE_RANGE_KEY_BITS);
    const value = (name: string) => Number(new RegExp(`#define ${name} (\\S+)`).exec(layoutH)?.[1]);
    assert.equal(value("SCOPE_INTERNAL"), SCOPE_INTERNAL);
    assert.equal(value("PROTO_TCP"), PROTO_TCP);
    assert.equal(value("PROTO_UDP"), PROTO_UDP);
    for (const [name, bit] of Object.entries(serviceFlags))
      assert.equal(value(`SVC_FLAG_${name}`), bit, name);
    for (const [name, bit] of Object.entries(backendFlags))
      assert.equal(value(`BACKEND_FLAG_${name}`), bit, name);
  });

  test("clang compiles the programs with them", () => {
    const r = compile(dir, join(bpfDir, "sock.c"), join(dir, "sock.o"));
    assert.equal(r.status, 0, r.stderr);
  });

  test("a header whose struct strays from layout.ts does not compile", () => {
    const strayed = join(dir, "strayed");
    execFileSync(process.execPath, [join(bpfDir, "gen-layout.mjs"), "--out", strayed]);
    const path = join(strayed, "switchyard_layout.h");
    const text = readFileSync(path, "utf8");
    assert.ok(text.includes("\t__u16 backend_slot;"));
    writeFileSync(path, text.replace("\t__u16 backend_slot;", "\t__u32 backend_slot;"));
    const r = compile(strayed, join(bpfDir, "sock.c"), join(strayed, "sock.o"));
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /lb4_key is 12 bytes in layout\.ts/);
  });
});

// Each kube-proxy flag and KubeProxyConfiguration field, value by value: what kube-proxy v1.37.2 decides (the value
// it ends up with, as --write-config-to writes it, or a refusal) against what we decide for the same input. The
// expectations were written by reading upstream's code, not by running it:
//   cmd/kube-proxy/app/options.go (AddFlags: each flag's type; processV1Alpha1Flags: the generic sync periods and
//     --cluster-cidr; processHostnameOverrideFlag; loadConfig: strict, then lenient decoding), server.go (Complete,
//     then Validate, then --write-config-to);
//   pkg/proxy/apis/config/validation/validation.go (Validate), v1alpha1/defaults.go and conversion.go (which
//     section the mode's periods and masqueradeAll are written to);
//   k8s.io/component-base logs/api/v1 (pflags.go: -v by strconv.ParseUint(v, 10, 31); options.go Validate: formats,
//     flushFrequency > 0, vmodule only in text format, the split-stream options behind LoggingAlphaOptions) and
//     metrics.ValidateShowHiddenMetricsVersion (only the previous minor, 1.36);
//   pflag v1.0.10 (int32 by strconv.ParseInt base 0, float32 by ParseFloat, bools by ParseBool, durations by
//     time.ParseDuration, string slices as one CSV record) and k8s.io/component-base/cli/flag (IPVar, IPPortVar,
//     MapStringBool).
// When kube-proxy v1.37.2's binary is built (packages/testbed/upstream), every row also runs through it,
// which checks the expectations themselves. Rows marked "deviation" are where we decide differently on
// purpose; the row says why and what we decide.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import { resolveBinary } from "@switchyard/testbed";
import { argvOf, oursDecide, removeScratch, title, upstreamDecide } from "./upstream-decisions.js";
import { FIELD_ROWS } from "./upstream-field-rows.js";
import { COMMAND_FLAGS, FLAG_ROWS } from "./upstream-flag-rows.js";

const upstream = resolveBinary("kube-proxy").path;
after(removeScratch);
const TABLES = [...FLAG_ROWS, ...FIELD_ROWS];

describe("kube-proxy flags and config fields: our decision against upstream's", () => {
  for (const t of TABLES)
    test(title(t), async () => {
      for (const [raw, theirs, deviation] of t.rows)
        assert.deepEqual(
          await oursDecide(argvOf(t, raw), t.path),
          deviation ? deviation.ours : theirs,
          `${JSON.stringify(raw)}`,
        );
    });
});

describe("the same rows through kube-proxy v1.37.2 itself (checks the expectations)", {
  skip: upstream ? undefined : "no kube-proxy binary: run npx switchyard-lab upstream build",
}, () => {
  test("every flag its --help lists has rows here, or is a command flag tested elsewhere", async () => {
    const help = (await promisify(execFile)(upstream ?? "", ["--help"])).stdout;
    const flags = [...help.matchAll(/^\s+(?:-[a-z], )?--([a-z0-9-]+)/gm)].map((m) => m[1]);
    const covered = new Set([
      ...FLAG_ROWS.map((t) => ("flag" in t.input ? t.input.flag : "")),
      ...COMMAND_FLAGS,
    ]);
    assert.ok(flags.length > 50, help);
    assert.deepEqual(
      flags.filter((f) => !covered.has(f ?? "")),
      [],
    );
  });

  for (const t of TABLES)
    test(title(t), async () => {
      for (const [raw, theirs] of t.rows)
        assert.deepEqual(
          await upstreamDecide(upstream ?? "", argvOf(t, raw), t.path),
          theirs,
          `${JSON.stringify(raw)}`,
        );
    });
});

// Each kube-controller-manager flag a kcm-style Deployment passes, against what kube-controller-manager v1.37.2
// decides for the same value. The expectations were written by reading upstream's code, not by running it:
//   cmd/kube-controller-manager/app/options/endpointslicecontroller.go and endpointslicemirroringcontroller.go
//     (ranges 1..50 and 1..1000, checked in Validate), defaults from pkg/controller/endpointslice*/config/v1alpha1;
//   k8s.io/controller-manager/options/generic.go (--controllers, --kube-api-*, leader election; resourceLock must be
//     "leases" while electing) and pkg/controller/apis/config/v1alpha1/defaults.go (QPS 20, burst 30); client-go's
//     kubernetes.NewForConfigAndClient (a burst of 0 or less under a positive QPS is refused);
//   k8s.io/component-base/config/options/leaderelectionconfig.go, client-go's leaderelection.NewLeaderElector
//     (durations > 0, lease > renew, renew > 1.2 × retry, checked only with --leader-elect);
//   k8s.io/apiserver/pkg/server/options/serving.go (--secure-port 0..65535, --bind-address an IP);
//   pflag v1.0.10 (ints by strconv.ParseInt base 0, bools by ParseBool, durations by time.ParseDuration,
//     negative ones included) and component-base's logs/api/v1 pflags.go (-v by strconv.ParseUint(v, 10, 31);
//     --logging-format names a registered format: text, and json as cmd/kube-controller-manager registers it);
//   cmd/kube-controller-manager/app/options/options.go (--master, then client-go's BuildConfigFromFlags) and the
//     flag sets it adds: secure serving, delegating authentication, debugging (--profiling, --contention-profiling),
//     --use-service-account-credentials, --min-resync-period, --controller-start-interval.
// Rows marked "deviation" are where we decide differently on purpose; the comment on the row says why.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ControllerFlags,
  DEFAULT_FLAGS,
  enabledControllers,
  FlagError,
  IGNORED_FLAGS,
  ignoredFlagNotes,
  parseFlags,
} from "../src/index.js";

type Field = Exclude<keyof ControllerFlags, "given">;
/** [value given, upstream's decision: the value it ends up with, or "reject"]. */
type Row = [string, unknown];

function decide(flag: string, raw: string, field: Field, extra: string[] = []): unknown {
  try {
    return parseFlags([`--${flag}=${raw}`, ...extra])[field];
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    // Every refusal is one line that names the flag.
    assert.ok(!err.message.includes("\n"), err.message);
    assert.match(err.message, new RegExp(`--${flag}\\b`), err.message);
    return "reject";
  }
}

const table: { flag: string; field: Field; def: unknown; rows: Row[]; extra?: string[] }[] = [
  {
    flag: "concurrent-service-endpoint-syncs",
    field: "concurrentServiceEndpointSyncs",
    def: 5,
    rows: [
      ["1", 1],
      ["50", 50],
      ["0", "reject"],
      ["51", "reject"],
      ["-1", "reject"],
      ["0x10", 16],
      ["+7", 7],
      ["010", 8],
      ["08", "reject"],
      ["2.5", "reject"],
      ["", "reject"],
    ],
  },
  {
    flag: "max-endpoints-per-slice",
    field: "maxEndpointsPerSlice",
    def: 100,
    rows: [
      ["1", 1],
      ["1000", 1000],
      ["0", "reject"],
      ["1001", "reject"],
      ["many", "reject"],
    ],
  },
  {
    flag: "endpointslice-updates-batch-period",
    field: "endpointUpdatesBatchPeriodMs",
    def: 0,
    // Upstream keeps a negative period and its work queue's AddAfter treats it as zero; we store the zero.
    rows: [
      ["1s", 1000],
      ["500ms", 500],
      ["0", 0],
      ["-1s", 0],
      ["1", "reject"],
      ["soon", "reject"],
    ],
  },
  {
    flag: "mirroring-concurrent-service-endpoint-syncs",
    field: "mirroringConcurrentServiceEndpointSyncs",
    def: 5,
    rows: [
      ["1", 1],
      ["50", 50],
      ["0", "reject"],
      ["51", "reject"],
    ],
  },
  {
    flag: "mirroring-max-endpoints-per-subset",
    field: "mirroringMaxEndpointsPerSubset",
    def: 1000,
    rows: [
      ["1", 1],
      ["1000", 1000],
      ["0", "reject"],
      ["1001", "reject"],
    ],
  },
  {
    flag: "mirroring-endpointslice-updates-batch-period",
    field: "mirroringEndpointUpdatesBatchPeriodMs",
    def: 0,
    rows: [
      ["2s", 2000],
      ["-5ms", 0],
      ["x", "reject"],
    ],
  },
  {
    flag: "kubeconfig",
    field: "kubeconfig",
    def: undefined,
    rows: [["/etc/kubernetes/kcm.conf", "/etc/kubernetes/kcm.conf"]],
  },
  {
    flag: "master",
    field: "master",
    def: "",
    rows: [
      ["https://10.0.0.1:6443", "https://10.0.0.1:6443"],
      ["10.0.0.1:8080", "10.0.0.1:8080"],
      // client-go's DefaultServerURL refuses a URL without a host when the client is made, so upstream exits.
      ["http://", "reject"],
      // deviation: client-go takes any scheme and every request then fails; we refuse at start.
      ["ftp://10.0.0.1", "reject"],
    ],
  },
  {
    flag: "authentication-kubeconfig",
    field: "authenticationKubeconfig",
    def: undefined,
    rows: [["/etc/kubernetes/kcm.conf", "/etc/kubernetes/kcm.conf"]],
  },
  {
    flag: "authorization-kubeconfig",
    field: "authorizationKubeconfig",
    def: undefined,
    rows: [["/etc/kubernetes/kcm.conf", "/etc/kubernetes/kcm.conf"]],
  },
  {
    flag: "bind-address",
    field: "bindAddress",
    def: "0.0.0.0",
    rows: [
      ["127.0.0.1", "127.0.0.1"],
      ["::", "::"],
      ["localhost", "reject"],
      ["10.0.0.1:80", "reject"],
    ],
  },
  {
    flag: "secure-port",
    field: "securePort",
    def: 10257,
    rows: [
      ["10257", 10257],
      ["0", 0],
      ["65535", 65535],
      ["65536", "reject"],
      ["-1", "reject"],
      ["port", "reject"],
    ],
  },
  {
    flag: "leader-elect",
    field: "leaderElect",
    def: true,
    rows: [
      ["false", false],
      ["F", false],
      ["True", true],
      ["1", true],
      ["yes", "reject"],
    ],
  },
  {
    flag: "leader-elect-lease-duration",
    field: "leaseDurationMs",
    def: 15_000,
    rows: [
      ["30s", 30_000],
      ["10s", "reject"],
      ["0s", "reject"],
      ["1h", 3_600_000],
      ["long", "reject"],
    ],
  },
  {
    flag: "leader-elect-renew-deadline",
    field: "renewDeadlineMs",
    def: 10_000,
    // 2.4s is exactly 1.2 × the 2s retry period: client-go wants strictly more.
    rows: [
      ["5s", 5000],
      ["15s", "reject"],
      ["2.4s", "reject"],
      ["2.5s", 2500],
      ["-1s", "reject"],
    ],
  },
  {
    flag: "leader-elect-retry-period",
    field: "retryPeriodMs",
    def: 2000,
    rows: [
      ["1s", 1000],
      ["0s", "reject"],
      ["9s", "reject"],
    ],
  },
  {
    flag: "leader-elect-resource-lock",
    field: "leaseResourceLock",
    def: "leases",
    rows: [
      ["leases", "leases"],
      ["endpointsleases", "reject"],
      ["configmaps", "reject"],
    ],
  },
  {
    flag: "leader-elect-resource-name",
    field: "leaseName",
    def: "switchyard-slice-controller",
    rows: [["slices", "slices"]],
  },
  {
    flag: "leader-elect-resource-namespace",
    field: "leaseNamespace",
    def: "kube-system",
    rows: [["infra", "infra"]],
  },
  {
    flag: "v",
    field: "verbosity",
    def: 0,
    rows: [
      ["2", 2],
      ["10", 10],
      ["20", 20],
      ["2147483647", 2147483647],
      ["-1", "reject"],
      ["+2", "reject"],
      ["0x2", "reject"],
      ["two", "reject"],
      ["2147483648", "reject"],
    ],
  },
  {
    flag: "feature-gates",
    field: "featureGates",
    def: {},
    // deviation: upstream also refuses gate names it does not know; we do not carry its gate list, so any name
    // passes the syntax check (and the flag is ignored either way).
    rows: [
      ["A=true,B=false", { A: true, B: false }],
      [" A = T ", { A: true }],
      ["", {}],
      ["A", "reject"],
      ["A=maybe", "reject"],
    ],
  },
  {
    flag: "controllers",
    field: "controllers",
    def: ["*"],
    // deviation: upstream refuses names that are not kube-controller-manager controllers; we do not carry its list.
    // deviation: a list that enables neither of our two controllers is refused (upstream would run nothing).
    rows: [
      ["*", ["*"]],
      ["*,-endpointslice-mirroring-controller", ["*", "-endpointslice-mirroring-controller"]],
      ["endpointslice", ["endpointslice"]],
      ["*,bootstrapsigner,tokencleaner", ["*", "bootstrapsigner", "tokencleaner"]],
      ["*,-endpointslice-controller,-endpointslice-mirroring-controller", "reject"],
      ["bootstrapsigner", "reject"],
    ],
  },
  {
    flag: "kube-api-qps",
    field: "kubeApiQps",
    def: 20,
    rows: [
      ["50", 50],
      ["0.5", 0.5],
      ["-1", -1],
      ["0", 0],
      ["fast", "reject"],
    ],
  },
  {
    flag: "kube-api-burst",
    field: "kubeApiBurst",
    def: 30,
    // Under the default QPS (20): client-go's NewForConfigAndClient refuses a burst of 0 or less, and kcm exits.
    rows: [
      ["100", 100],
      ["0x20", 32],
      ["0", "reject"],
      ["-1", "reject"],
      ["1.5", "reject"],
    ],
  },
  {
    flag: "kube-api-content-type",
    field: "kubeApiContentType",
    def: "application/vnd.kubernetes.protobuf",
    rows: [["application/json", "application/json"]],
  },
];

/**
 * Flags kept nowhere (accepted, checked, named as ignored): upstream's decision is to accept or to refuse, and
 * ours is whether parsing succeeds.
 */
const unstored: { flag: string; rows: [string, "accept" | "reject"][] }[] = [
  {
    flag: "use-service-account-credentials",
    rows: [
      ["true", "accept"],
      ["F", "accept"],
      ["yes", "reject"],
    ],
  },
  { flag: "client-ca-file", rows: [["/etc/kubernetes/pki/ca.crt", "accept"]] },
  { flag: "requestheader-client-ca-file", rows: [["/etc/kubernetes/pki/front-proxy-ca.crt", "accept"]] },
  { flag: "tls-cert-file", rows: [["/etc/kubernetes/pki/kcm.crt", "accept"]] },
  { flag: "tls-private-key-file", rows: [["/etc/kubernetes/pki/kcm.key", "accept"]] },
  { flag: "cert-dir", rows: [["/var/run/kubernetes", "accept"]] },
  {
    flag: "profiling",
    rows: [
      ["false", "accept"],
      ["0", "accept"],
      ["off", "reject"],
    ],
  },
  { flag: "contention-profiling", rows: [["true", "accept"]] },
  {
    flag: "min-resync-period",
    rows: [
      ["12h", "accept"],
      ["-1s", "accept"],
      ["12", "reject"],
    ],
  },
  {
    flag: "controller-start-interval",
    rows: [
      ["0s", "accept"],
      ["later", "reject"],
    ],
  },
  {
    flag: "logging-format",
    rows: [
      ["text", "accept"],
      ["json", "accept"],
      ["yaml", "reject"],
    ],
  },
  { flag: "vmodule", rows: [["controller*=4", "accept"]] },
  {
    flag: "log-flush-frequency",
    rows: [
      ["5s", "accept"],
      ["often", "reject"],
    ],
  },
];

describe("kube-controller-manager flags: our decision against upstream's", () => {
  for (const { flag, field, def, rows, extra } of table) {
    test(`--${flag}`, () => {
      assert.deepEqual(DEFAULT_FLAGS[field], def, "default");
      for (const [raw, upstream] of rows)
        assert.deepEqual(decide(flag, raw, field, extra), upstream, `--${flag}=${raw}`);
    });
  }

  test("leader-election durations are not checked without --leader-elect, as upstream", () => {
    const f = parseFlags([
      "--leader-elect=false",
      "--leader-elect-lease-duration=-1s",
      "--leader-elect-resource-lock=x",
    ]);
    assert.equal(f.leaseDurationMs, -1000);
    assert.equal(f.leaseResourceLock, "x");
  });

  test("a negative burst is fine when QPS is negative (no limiter at all, as client-go)", () => {
    assert.equal(parseFlags(["--kube-api-qps=-1", "--kube-api-burst=-1"]).kubeApiBurst, -1);
  });

  test("QPS 0 with burst 0 is client-go's defaults (5 and 10); a negative burst there is refused", () => {
    assert.equal(parseFlags(["--kube-api-qps=0", "--kube-api-burst=0"]).kubeApiBurst, 0);
    // deviation: kcm starts, and its rate limiter then fails every request (burst -1 under client-go's QPS 5).
    assert.throws(() => parseFlags(["--kube-api-qps=0", "--kube-api-burst=-1"]), FlagError);
  });

  for (const { flag, rows } of unstored) {
    test(`--${flag} (accepted and ignored)`, () => {
      for (const [raw, upstream] of rows) {
        let ours: "accept" | "reject" = "accept";
        try {
          parseFlags([`--${flag}=${raw}`]);
        } catch (err) {
          if (!(err instanceof FlagError)) throw err;
          assert.match(err.message, new RegExp(`--${flag}\\b`), err.message);
          ours = "reject";
        }
        assert.equal(ours, upstream, `--${flag}=${raw}`);
      }
    });
  }

  test("every ignored flag has rows here", () => {
    const covered = new Set([...table.map((r) => r.flag), ...unstored.map((r) => r.flag)]);
    for (const name of Object.keys(IGNORED_FLAGS)) assert.ok(covered.has(name), name);
  });
});

describe("--controllers selects which of the two run, as upstream's IsControllerEnabled", () => {
  const cases: [string[], { endpointSlice: boolean; mirroring: boolean }][] = [
    [["*"], { endpointSlice: true, mirroring: true }],
    [["*", "-endpointslice-controller"], { endpointSlice: false, mirroring: true }],
    [["*", "-endpointslicemirroring"], { endpointSlice: true, mirroring: false }],
    [["endpointslice-controller"], { endpointSlice: true, mirroring: false }],
    [
      ["endpointslice-mirroring-controller", "-endpointslice-mirroring-controller"],
      { endpointSlice: false, mirroring: true },
    ],
    [["-endpointslice", "endpointslice", "*"], { endpointSlice: false, mirroring: true }],
    [[], { endpointSlice: false, mirroring: false }],
  ];
  for (const [entries, expected] of cases)
    test(entries.join(",") || "(empty)", () => assert.deepEqual(enabledControllers(entries), expected));
});

describe("ignored flags are named once at startup, with why", () => {
  test("only the ignored ones that were given, each once", () => {
    const f = parseFlags([
      "--secure-port=10257",
      "--bind-address=0.0.0.0",
      "--secure-port=0",
      "--max-endpoints-per-slice=10",
      "--use-service-account-credentials=true",
      "--master=https://10.0.0.1:6443",
    ]);
    assert.deepEqual(
      ignoredFlagNotes(f.given).map((n) => n.flag),
      ["--secure-port", "--bind-address", "--use-service-account-credentials"],
    );
    for (const note of ignoredFlagNotes(f.given)) assert.ok(note.reason.length > 20, note.flag);
  });
});

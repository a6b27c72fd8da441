import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, ResponseWriter } from "../../src/plugin/handler.js";
import { normalizeZoneArgs } from "../../src/plugin/pkg/zone-args.js";
import type { HostsFiles } from "../../src/plugins/hosts/hosts-data.js";
import { HostsData } from "../../src/plugins/hosts/hosts-data.js";
import { hostsMapSize, parseHosts } from "../../src/plugins/hosts/hosts-map.js";
import { addressFromReverse } from "../../src/plugins/hosts/reverse.js";
import type { ResolverDeps } from "../../src/registry.js";
import { defaultRegistry } from "../../src/registry.js";
import { Resolver } from "../../src/resolver.js";
import type { Timers } from "../../src/server/timers.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { dig } from "../helpers/clients.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const TYPES: Record<string, number> = { A: 1, PTR: 12, MX: 15, TXT: 16, AAAA: 28 };

/** An in-memory file system whose files the test rewrites, stamps included. */
class FakeFiles implements HostsFiles {
  readonly files = new Map<string, { text: string; mtimeMs: number }>();
  reads = 0;
  write(path: string, text: string, mtimeMs: number) {
    this.files.set(path, { text, mtimeMs });
  }
  stat(path: string) {
    const f = this.files.get(path);
    if (!f)
      throw Object.assign(new Error(`ENOENT: no such file or directory, stat '${path}'`), { code: "ENOENT" });
    return { mtimeMs: f.mtimeMs, size: Buffer.byteLength(f.text), isDirectory: false };
  }
  read(path: string) {
    this.reads++;
    this.stat(path);
    return this.files.get(path)?.text ?? "";
  }
}

/** Timers that only fire when the test moves the clock. */
class FakeTimers implements Timers {
  now = 0;
  private pending: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 0;
  setTimeout(fn: () => void, ms: number) {
    const id = this.nextId++;
    this.pending.push({ at: this.now + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.pending = this.pending.filter((p) => p.id !== handle);
  }
  advance(ms: number) {
    const until = this.now + ms;
    for (;;) {
      const due = this.pending.filter((p) => p.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.pending = this.pending.filter((p) => p !== due);
      this.now = due.at;
      due.fn();
    }
    this.now = until;
  }
  get count() {
    return this.pending.length;
  }
}

interface Built {
  ask(
    name: string,
    type: string,
  ): Promise<{ rcode: number; error?: string; reply?: Message; records: string[] }>;
  stop(): Promise<void>;
  metrics: Metrics;
  logs: string[];
}

/** Builds the Corefile, runs the startup hooks, and asks the first block's chain directly. */
async function build(corefile: string, deps: Partial<ResolverDeps> = {}): Promise<Built> {
  const metrics = new Metrics();
  const logs: string[] = [];
  const config = buildConfig(parseCorefile(corefile, { env: {} }), {
    registry: defaultRegistry(),
    deps: { metrics, log: (l: string) => logs.push(l), ...deps } as ResolverDeps,
  });
  for (const hook of config.startup) await hook();
  const handler = config.servers[0]?.sites[0]?.handler as Handler;
  return {
    metrics,
    logs,
    async ask(name, type) {
      let reply: Message | undefined;
      const w: ResponseWriter = {
        transport: "udp",
        remote: { address: "127.0.0.1", port: 5353, family: "IPv4" },
        write: (m) => {
          reply = m;
        },
      };
      const q = newQuery(name, TYPES[type] ?? 0);
      const result = await handler.serveDNS({ zone: ".", server: "dns://:53" }, w, q);
      const records = (reply?.answer ?? []).map(formatRecord);
      return { rcode: result.rcode, error: result.error?.message, reply, records };
    },
    async stop() {
      for (const hook of config.shutdown) await hook();
    },
  };
}

const EXAMPLE = `127.0.0.1 localhost localhost.domain
::1 localhost localhost.domain
10.0.0.1 example.org   # a comment
::FFFF:10.0.0.2 example.com
fe80::1%lo0 linklocal.test
5.6.7.8 *.apps.example.com
1.2.3.4 aa.apps.example.com
010.0.0.1 bad.octal
123.123.123 short
10.0.0.9
`;

describe("hosts: parsing the file", () => {
  test("names are lower-cased and absolute, comments and bad lines skipped, zones filter", () => {
    const map = parseHosts(`${EXAMPLE}10.1.1.1 PreserveMe Other.ZONE\n`, {
      origins: ["."],
      autoReverse: true,
    });
    assert.deepEqual(map.name4.get("example.org."), ["10.0.0.1"]);
    assert.deepEqual(map.name4.get("example.com."), ["10.0.0.2"], "a mapped address is IPv4");
    assert.deepEqual(map.name6.get("linklocal.test."), ["fe80::1"], "the zone index is dropped");
    assert.deepEqual(map.addr.get("10.1.1.1"), ["preserveme.", "other.zone."]);
    assert.equal(map.name4.has("bad.octal."), false);
    assert.equal(map.name4.has("short."), false);
    assert.deepEqual(map.wild4.get("*.apps.example.com."), ["5.6.7.8"]);
    assert.equal(map.addr.has("5.6.7.8"), false, "wildcards get no PTR");
    const only = parseHosts(EXAMPLE, { origins: ["example.org."], autoReverse: false });
    assert.deepEqual([...only.name4.keys()], ["example.org."]);
    assert.equal(only.addr.size, 0);
  });

  test("entries count addresses and reverse names (CoreDNS's Map.Len)", () => {
    const map = parseHosts("10.0.0.1 a b\n::1 a\n5.6.7.8 *.w\n", { origins: ["."], autoReverse: true });
    assert.equal(hostsMapSize(map), 2 + 1 + 1 + 3);
  });

  test("reverse names are read as CoreDNS reads them", () => {
    assert.equal(addressFromReverse("1.0.0.10.in-addr.arpa."), "10.0.0.1");
    assert.equal(addressFromReverse("0.10.in-addr.arpa."), "");
    assert.equal(addressFromReverse("01.0.0.10.in-addr.arpa."), "");
    const v6 = `${"1.0.0.0.".repeat(1)}${"0.0.0.0.".repeat(6)}0.8.e.f.ip6.arpa.`;
    assert.equal(addressFromReverse(v6), "fe80::1");
    assert.equal(addressFromReverse(`x.${v6}`), "fe80::1", "labels beyond whole groups are dropped");
    assert.equal(addressFromReverse("example.org."), "");
  });

  test("zone arguments", () => {
    assert.deepEqual(normalizeZoneArgs(["Miek.NL", "10.0.0.9/8", "dns://example.org:53"]), [
      "miek.nl.",
      "10.in-addr.arpa.",
      "example.org.",
    ]);
    assert.deepEqual(normalizeZoneArgs(["10.0.0.0/23"]), ["0.0.10.in-addr.arpa.", "1.0.10.in-addr.arpa."]);
  });
});

describe("hosts: answers", () => {
  const files = new FakeFiles();
  files.write("/etc/hosts", EXAMPLE, 1000);
  const corefile = (block = "") => `. {\n    hosts${block}\n}\n`;

  test("A, AAAA and PTR from the file, owner lower-cased, TTL 3600, authoritative", async () => {
    const s = await build(corefile(), { hostsFiles: files });
    assert.deepEqual((await s.ask("Example.ORG.", "A")).records, ["example.org. 3600 IN A 10.0.0.1"]);
    assert.equal((await s.ask("example.org.", "A")).reply?.aa, true);
    assert.deepEqual((await s.ask("localhost.", "AAAA")).records, ["localhost. 3600 IN AAAA ::1"]);
    assert.deepEqual((await s.ask("1.0.0.127.in-addr.arpa.", "PTR")).records, [
      "1.0.0.127.in-addr.arpa. 3600 IN PTR localhost.",
      "1.0.0.127.in-addr.arpa. 3600 IN PTR localhost.domain.",
    ]);
    assert.deepEqual((await s.ask("2.0.0.10.in-addr.arpa.", "PTR")).records, [
      "2.0.0.10.in-addr.arpa. 3600 IN PTR example.com.",
    ]);
    await s.stop();
  });

  test("wildcards match one label; explicit names win", async () => {
    const s = await build(corefile(), { hostsFiles: files });
    assert.deepEqual((await s.ask("x.apps.example.com.", "A")).records, [
      "x.apps.example.com. 3600 IN A 5.6.7.8",
    ]);
    assert.deepEqual((await s.ask("aa.apps.example.com.", "A")).records, [
      "aa.apps.example.com. 3600 IN A 1.2.3.4",
    ]);
    assert.equal((await s.ask("a.b.apps.example.com.", "A")).rcode, 2);
    assert.equal((await s.ask("apps.example.com.", "A")).rcode, 2);
    await s.stop();
  });

  test("a known name with another type is NODATA; an unknown one SERVFAIL without fallthrough", async () => {
    const s = await build(corefile(), { hostsFiles: files });
    const nodata = await s.ask("example.org.", "AAAA");
    assert.equal(nodata.rcode, 0);
    assert.deepEqual(nodata.records, []);
    assert.equal(nodata.reply?.aa, true);
    assert.deepEqual((await s.ask("example.org.", "MX")).records, []);
    const missing = await s.ask("missing.test.", "A");
    assert.equal(missing.rcode, 2);
    assert.equal(missing.reply, undefined, "SERVFAIL is left for the server to write");
    const noPtr = await s.ask("9.9.9.9.in-addr.arpa.", "PTR");
    assert.equal(noPtr.rcode, 2);
    assert.equal(noPtr.error, "plugin/hosts: no next plugin found", "PTR misses go on regardless");
    await s.stop();
  });

  test("fallthrough passes misses on (in its zones only); NODATA stays", async () => {
    const s = await build(`. {\n    hosts {\n        fallthrough example.net\n    }\n    whoami\n}\n`, {
      hostsFiles: files,
    });
    const passed = await s.ask("missing.example.net.", "A");
    assert.equal(passed.rcode, 0);
    assert.equal(passed.reply?.additional[0]?.type, "A", "whoami answered");
    assert.equal((await s.ask("missing.test.", "A")).rcode, 2);
    assert.deepEqual((await s.ask("example.org.", "TXT")).reply?.additional, []);
    // PTR misses go on even outside fallthrough's zones.
    assert.equal((await s.ask("9.9.9.9.in-addr.arpa.", "PTR")).reply?.additional.length, 2);
    await s.stop();
  });

  test("fallthrough_unsupported sends other types of a known name on", async () => {
    const s = await build(
      `. {\n    hosts {\n        fallthrough\n        fallthrough_unsupported\n    }\n    whoami\n}\n`,
      { hostsFiles: files },
    );
    assert.equal((await s.ask("example.org.", "TXT")).reply?.additional.length, 2);
    assert.deepEqual((await s.ask("example.org.", "AAAA")).records, [], "A/AAAA NODATA is still ours");
    await s.stop();
  });

  test("zones: names outside are passed on, PTRs answered anywhere", async () => {
    const s = await build(
      `. {\n    hosts /etc/hosts example.org {\n        10.0.0.7 x.example.org\n    }\n}\n`,
      {
        hostsFiles: files,
      },
    );
    assert.deepEqual((await s.ask("example.org.", "A")).records, ["example.org. 3600 IN A 10.0.0.1"]);
    assert.equal((await s.ask("example.com.", "A")).rcode, 2);
    assert.deepEqual((await s.ask("7.0.0.10.in-addr.arpa.", "PTR")).records, [
      "7.0.0.10.in-addr.arpa. 3600 IN PTR x.example.org.",
    ]);
    assert.equal((await s.ask("2.0.0.10.in-addr.arpa.", "PTR")).rcode, 2, "example.com was filtered out");
    await s.stop();
  });

  test("inline entries, ttl and no_reverse; file entries come first", async () => {
    const s = await build(
      corefile(" {\n        10.0.0.8 example.org inline.test\n        ttl 60\n        no_reverse\n    }"),
      { hostsFiles: files },
    );
    assert.deepEqual((await s.ask("example.org.", "A")).records, [
      "example.org. 60 IN A 10.0.0.1",
      "example.org. 60 IN A 10.0.0.8",
    ]);
    assert.deepEqual((await s.ask("inline.test.", "A")).records, ["inline.test. 60 IN A 10.0.0.8"]);
    assert.equal((await s.ask("1.0.0.10.in-addr.arpa.", "PTR")).rcode, 2);
    await s.stop();
  });
});

describe("hosts: reload", () => {
  test("the file is re-read on each period when its mtime or size changed; reload 0 never", async () => {
    const files = new FakeFiles();
    const timers = new FakeTimers();
    files.write("/h", "10.0.0.1 a.test\n", 1000);
    const s = await build(`. {\n    hosts /h {\n        reload 2s\n    }\n}\n`, {
      hostsFiles: files,
      timers,
    });
    assert.deepEqual((await s.ask("a.test.", "A")).records, ["a.test. 3600 IN A 10.0.0.1"]);
    assert.equal(files.reads, 1);
    timers.advance(2000);
    assert.equal(files.reads, 1, "unchanged stamps: not read again");
    files.write("/h", "10.0.0.2 a.test\n", 5000);
    timers.advance(1999);
    assert.deepEqual((await s.ask("a.test.", "A")).records, ["a.test. 3600 IN A 10.0.0.1"]);
    timers.advance(1);
    assert.deepEqual((await s.ask("a.test.", "A")).records, ["a.test. 3600 IN A 10.0.0.2"]);
    files.files.delete("/h");
    timers.advance(2000);
    assert.deepEqual(
      (await s.ask("a.test.", "A")).records,
      ["a.test. 3600 IN A 10.0.0.2"],
      "a gone file keeps",
    );
    const text = await s.metrics.text();
    assert.match(text, /coredns_hosts_entries\{hostsfile="\/h"\} 2/);
    assert.match(text, /coredns_hosts_reload_timestamp_seconds 5\n/);
    await s.stop();
    assert.equal(timers.count, 0, "shutdown stops the timer");

    const off = await build(`. {\n    hosts /h {\n        reload 0\n    }\n}\n`, {
      hostsFiles: files,
      timers,
    });
    assert.equal(timers.count, 0);
    await off.stop();
  });

  test("HostsData keeps inline entries whatever the file does", () => {
    const files = new FakeFiles();
    const data = new HostsData("/none", { origins: ["."], autoReverse: true }, ["10.0.0.3 i.test"], files);
    data.reload();
    assert.deepEqual(data.lookupV4("I.TEST."), ["10.0.0.3"]);
    assert.deepEqual(data.lookupAddr("10.0.0.3"), ["i.test."]);
  });
});

describe("hosts: setup errors", () => {
  const files = new FakeFiles();
  files.write("/etc/hosts", "", 1);
  const errorOf = async (block: string) => {
    try {
      await build(`. {\n    hosts /etc/hosts {\n        ${block}\n    }\n}\n`, { hostsFiles: files });
    } catch (err) {
      return (err as Error).message;
    }
    return "no error";
  };

  test("CoreDNS's messages, at the offending line", async () => {
    const cases: [string, string][] = [
      ["ttl", "plugin/hosts: Corefile:3 - Error during parsing: ttl needs a time in second"],
      ["ttl abc", "plugin/hosts: Corefile:3 - Error during parsing: ttl needs a number of second"],
      ["ttl 0", "plugin/hosts: Corefile:3 - Error during parsing: ttl provided is invalid"],
      ["ttl 65536", "plugin/hosts: Corefile:3 - Error during parsing: ttl provided is invalid"],
      [
        "reload",
        "plugin/hosts: Corefile:3 - Error during parsing: reload needs a duration (zero seconds to disable)",
      ],
      ["reload 5", "plugin/hosts: Corefile:3 - Error during parsing: invalid duration for reload '5'"],
      [
        "reload -1s",
        "plugin/hosts: Corefile:3 - Error during parsing: invalid negative duration for reload '-1s'",
      ],
      [
        "fallthrough_unsupported x y",
        "plugin/hosts: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'y'",
      ],
      [
        "fallthrough_unsupported",
        "plugin/hosts: Corefile:4 - Error during parsing: fallthrough_unsupported requires fallthrough",
      ],
      [
        "fallthrough\n        10.0.0.1 x.test",
        "plugin/hosts: Corefile:4 - Error during parsing: unknown property '10.0.0.1'",
      ],
    ];
    for (const [block, message] of cases) assert.equal(await errorOf(block), message, block);
  });

  test("once per server block; a missing file only warns", async () => {
    await assert.rejects(
      build(`. {\n    hosts\n    hosts\n}\n`, { hostsFiles: files }),
      /plugin\/hosts: this plugin can only be used once per Server Block$/,
    );
    const s = await build(`. {\n    hosts /nope\n}\n`, { hostsFiles: files });
    assert.deepEqual(s.logs, ["[WARNING] plugin/hosts: File does not exist: /nope"]);
    await s.stop();
    const denied: HostsFiles = {
      stat: () => {
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      },
      read: () => "",
    };
    await assert.rejects(
      build(`. {\n    hosts /secret\n}\n`, { hostsFiles: denied }),
      /plugin\/hosts: \S+:\d+ - Error during parsing: unable to access hosts file '\/secret': stat \/secret: permission denied/,
    );
  });
});

/** A fixture cluster that reports a (fixed) generation, which lets the kubernetes plugin keep replies. */
function keepingCluster() {
  return Object.assign(fixtureCluster(), { generation: () => 1 });
}

describe("hosts: in front of kubernetes", () => {
  test("over the server, kubernetes's kept replies never answer ahead of hosts (no fast path past it)", async () => {
    const files = new FakeFiles();
    const timers = new FakeTimers();
    files.write("/h", "10.0.0.1 h.cluster.local\n", 1);
    const resolver = Resolver.fromCorefile(
      `cluster.local {
    cache 30 {
        disable success cluster.local
        disable denial cluster.local
    }
    hosts /h {
        fallthrough
    }
    kubernetes cluster.local
}
`,
      {
        env: {},
        // A view with generation(), so the kubernetes plugin keeps its replies for the fast path.
        deps: { cluster: keepingCluster(), hostsFiles: files, timers },
        address: "127.0.0.1",
        portOverride: 0,
      },
    );
    await resolver.start();
    const port = resolver.servers[0]?.address.port ?? 0;
    const svc = "svc1.testns.svc.cluster.local";
    try {
      for (let i = 0; i < 3; i++) {
        assert.match(await dig(port, "h.cluster.local", "A", "+short", "+nocookie"), /^10\.0\.0\.1$/m);
        assert.match(await dig(port, svc, "A", "+short", "+nocookie"), /^172\.30\.0\.10$/m, "fell through");
      }
      // Now hosts claims the service's name: every later query must see it, none a kept kubernetes reply.
      files.write("/h", `10.0.0.2 ${svc}\n`, 2);
      timers.advance(5000);
      for (let i = 0; i < 3; i++)
        assert.equal((await dig(port, svc, "A", "+short", "+nocookie")).trim(), "10.0.0.2");
    } finally {
      await resolver.stop();
    }
  });
});

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { eventually } from "@switchyard/kube/testing";
import { main } from "../src/main.js";
import { freePort, nxdomainUpstream, startApp } from "../src/testing/process.js";

const run = promisify(execFile);

function io(cwd = "/") {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), cwd, env: {} } };
}

async function dig(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("dig", ["@127.0.0.1", "-p", String(port), "+time=2", "+tries=1", ...args]);
  return stdout;
}

describe("the switchyard-dns command", { timeout: 60_000 }, () => {
  test("-version keeps CoreDNS's first-line shape and names Switchyard", async () => {
    const t = io();
    assert.equal(await main(["-version"], t.io), 0);
    assert.match(t.out[0] ?? "", /^Switchyard-DNS-\d+\.\d+\.\d+ \(CoreDNS-1\.14\.7 compatible\)$/);
    assert.match(t.out[1] ?? "", /^linux\/\w+, node\d+\.\d+\.\d+$/);
  });

  test("-plugins lists this build's plugins as CoreDNS does", async () => {
    const t = io();
    assert.equal(await main(["-plugins"], t.io), 0);
    assert.match(t.out.join("\n"), /^Server types:\n {2}dns\n\nCaddyfile loaders:\n/);
    for (const name of ["kubernetes", "forward", "cache", "log", "loop", "reload", "health", "ready"])
      assert.ok(t.out.join("\n").includes(`  dns.${name}\n`), name);
  });

  test("bad flags, a missing or malformed Corefile: one line on stderr, non-zero exit", async () => {
    let t = io();
    assert.equal(await main(["-conf"], t.io), 2);
    assert.deepEqual(t.err, ["switchyard-dns: flag needs an argument: -conf (see -help)"]);
    t = io("/nonexistent-dir");
    assert.equal(await main(["-conf", "Corefile"], t.io), 1);
    assert.deepEqual(t.err, ["switchyard-dns: cannot read Corefile /nonexistent-dir/Corefile: ENOENT"]);
    t = io();
    assert.equal(await main(["-quiet", "Corefile", "extra"], t.io), 1);
    assert.deepEqual(t.err, ["switchyard-dns: extra command line arguments: [Corefile extra]"]);
    const app = startApp(".:0 {\n    kubernetes {\n        ttl 9999\n    }\n}\n");
    assert.equal((await app.exited).code, 1);
    assert.match(
      app.output(),
      /^switchyard-dns: plugin\/kubernetes: Corefile:3 - Error during parsing: ttl must be in range \[0, 3600\]: 9999\n$/,
    );
  });

  test("-dns.port, -pidfile, the banner, and SIGUSR1 reloading a changed Corefile", async () => {
    const upstream = await nxdomainUpstream();
    const port = await freePort();
    const corefile = (extra: string) => `. {\n    ${extra}\n    forward . 127.0.0.1:${upstream.port}\n}\n`;
    const app = startApp(corefile(""), ["-dns.port", String(port), "-pidfile", "dns.pid"]);
    const pidfile = join(app.dir, "dns.pid");
    try {
      await eventually(`the banner\n${app.output()}`, () => app.output().includes("CoreDNS-1.14.7"), {
        timeoutMs: 20_000,
      });
      assert.match(app.output(), new RegExp(`^\\.:${port}\\nSwitchyard-DNS-`));
      assert.equal(readFileSync(pidfile, "utf8").trim(), String(app.child.pid));
      assert.match(await dig(port, "example.org"), /status: NXDOMAIN/);
      writeFileSync(join(app.dir, "Corefile"), corefile("log"));
      app.child.kill("SIGUSR1");
      await eventually(
        `the reload\n${app.output()}`,
        () => app.output().includes("[INFO] Reloading complete"),
        { timeoutMs: 20_000 },
      );
      await dig(port, "after.example.org");
      await eventually(
        "a log line",
        () => /\[INFO\] 127\.0\.0\.1:\d+ - \d+ "A IN after\.example\.org\. udp/.test(app.output()),
        { timeoutMs: 20_000 },
      );
      writeFileSync(join(app.dir, "Corefile"), corefile("bogus"));
      app.child.kill("SIGUSR1");
      await eventually("the failed reload", () => app.output().includes("[ERROR] Restart failed:"), {
        timeoutMs: 20_000,
      });
      assert.match(
        app.output(),
        /\[ERROR\] Restart failed: .*Corefile:2 - Error during parsing: Unknown directive 'bogus'/,
      );
      assert.match(await dig(port, "still.example.org"), /status: NXDOMAIN/);
      app.child.kill("SIGINT");
      assert.deepEqual(await app.exited, { code: 0, signal: null });
      assert.equal(existsSync(pidfile), false, "the pidfile is removed on exit");
    } finally {
      app.child.kill("SIGKILL");
      upstream.close();
    }
  });

  test("-conf stdin: the Corefile piped in is served", async () => {
    const port = await freePort();
    const bin = join(import.meta.dirname, "..", "bin", "switchyard-dns.js");
    const child = spawn(process.execPath, [bin, "-conf", "stdin"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (b: Buffer) => (output += b.toString()));
    child.stderr.on("data", (b: Buffer) => (output += b.toString()));
    child.stdin.end(`.:${port} {\n    whoami\n}\n`);
    try {
      await eventually(`the banner\n${output}`, () => output.includes(`.:${port}`), { timeoutMs: 20_000 });
      assert.match(await dig(port, "piped.example", "A"), /^piped\.example\.\s+0\s+IN\s+A\s+127\.0\.0\.1$/m);
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("a forwarding loop ends the process with CoreDNS's message", async () => {
    const port = await freePort();
    const app = startApp(`.:${port} {\n    forward . 127.0.0.1:${port}\n    loop\n}\n`, ["-quiet"]);
    try {
      const exit = await app.exited;
      assert.equal(exit.code, 1);
      assert.match(
        app.output(),
        /\[FATAL\] plugin\/loop: Loop \(127\.0\.0\.1:\d+ -> .*\) detected for zone "\.", see https:\/\/coredns\.io\/plugins\/loop#troubleshooting\. Query: "HINFO \d+\.\d+\."/,
      );
    } finally {
      app.child.kill("SIGKILL");
    }
  });
});

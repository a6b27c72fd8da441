import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { downloadKind, kindReleaseFile } from "../../src/kind/kind-release.js";

// A release host laid out as kind's (<base>/<version>/<file> and <file>.sha256sum), over real HTTP: the download
// path a laptop without Go takes, which cannot reach GitHub from here.
const script = Buffer.from('#!/bin/sh\necho "kind v0.33.0 go1.26 linux/amd64"\n');
const sha = createHash("sha256").update(script).digest("hex");
const files: Record<string, Buffer> = {
  "/v0.33.0/kind-linux-amd64": script,
  "/v0.33.0/kind-linux-amd64.sha256sum": Buffer.from(`${sha}  kind-linux-amd64\n`),
  "/v0.33.0/kind-darwin-arm64": script,
  "/v0.33.0/kind-darwin-arm64.sha256sum": Buffer.from(`${"0".repeat(64)}  kind-darwin-arm64\n`),
};

describe("kind's release binary, for a machine without Go", () => {
  let server: Server;
  let base: string;
  const dirs: string[] = [];
  const binDir = () => {
    const d = mkdtempSync(join(tmpdir(), "kind-release-"));
    dirs.push(d);
    return join(d, "bin");
  };
  const quiet = { write: () => true };

  before(async () => {
    server = createServer((req, res) => {
      const body = files[req.url ?? ""];
      res.writeHead(body ? 200 : 404).end(body ?? "not found");
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("file names as kind publishes them; none for Windows (WSL 2 is Linux) or other CPUs", () => {
    assert.equal(kindReleaseFile("darwin", "arm64"), "kind-darwin-arm64");
    assert.equal(kindReleaseFile("darwin", "x64"), "kind-darwin-amd64");
    assert.equal(kindReleaseFile("linux", "x64"), "kind-linux-amd64");
    assert.equal(kindReleaseFile("linux", "arm64"), "kind-linux-arm64");
    assert.equal(kindReleaseFile("win32", "x64"), undefined);
    assert.equal(kindReleaseFile("linux", "ia32"), undefined);
  });

  test("downloads, checks the published SHA-256, installs it executable", async () => {
    const dir = binDir();
    const env = { SWITCHYARD_KIND_RELEASES: `${base}/` };
    const path = await downloadKind({
      version: "v0.33.0",
      binDir: dir,
      env,
      platform: "linux",
      arch: "x64",
      out: quiet,
    });
    assert.equal(path, join(dir, "kind"));
    assert.equal(statSync(path).mode & 0o777, 0o755);
    assert.match(execFileSync(path, { encoding: "utf8" }), /kind v0\.33\.0/);
    assert.deepEqual(readdirSync(dir), ["kind"]);
  });

  test("a wrong checksum or a missing file is one line naming the URL, and installs nothing", async () => {
    const env = { SWITCHYARD_KIND_RELEASES: base };
    const dir = binDir();
    await assert.rejects(
      downloadKind({ version: "v0.33.0", binDir: dir, env, platform: "darwin", arch: "arm64", out: quiet }),
      (err: Error) =>
        new RegExp(
          `^${base}/v0.33.0/kind-darwin-arm64: SHA-256 ${sha} is not the published 0{64}; nothing was installed$`,
        ).test(err.message),
    );
    await assert.rejects(
      downloadKind({ version: "v0.34.0", binDir: dir, env, platform: "linux", arch: "x64", out: quiet }),
      { message: `downloading ${base}/v0.34.0/kind-linux-amd64.sha256sum: HTTP 404` },
    );
    assert.equal(existsSync(dir), false, "nothing created");
  });

  test("a release host that does not answer is one line too", async () => {
    // A port that was just free: nothing listens there (fetch refuses well-known ports like 9 outright).
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const env = { SWITCHYARD_KIND_RELEASES: `http://127.0.0.1:${port}` };
    await assert.rejects(
      downloadKind({ version: "v0.33.0", binDir: binDir(), env, platform: "linux", arch: "x64", out: quiet }),
      {
        message: `downloading http://127.0.0.1:${port}/v0.33.0/kind-linux-amd64.sha256sum: connect ECONNREFUSED 127.0.0.1:${port}`,
      },
    );
  });
});

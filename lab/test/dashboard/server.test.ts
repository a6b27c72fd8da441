import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LiveView } from "../../src/dashboard/live-view.js";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/server.js";
import { runMain } from "../cli/harness.js";

/** A GET with the Host header we choose; resolves with status, type and body (up to `until` for a stream). */
function get(
  url: string,
  o: { host?: string; method?: string; until?: (body: string) => boolean } = {},
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: o.method ?? "GET",
        headers: { host: o.host ?? u.host },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        const done = () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body });
        res.on("data", (c: string) => {
          body += c;
          if (o.until?.(body)) {
            req.destroy();
            done();
          }
        });
        res.on("end", done);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("the dashboard's server", () => {
  let server: DashboardServer;
  let state = { n: 1 };
  const live = new LiveView(() => state, 0);

  before(async () => {
    live.publish();
    server = await serveDashboard({
      host: "127.0.0.1",
      port: 0,
      title: "lab <sy>",
      pageDir: mkdtempSync(join(tmpdir(), "dash-page-")),
      current: () => live.current(),
      subscribe: (l) => live.subscribe(l),
    });
  });
  after(() => server.close());

  test("the page: its import map names the vendored modules, and says when the script is not built", async () => {
    const res = await get(server.url);
    assert.equal(res.status, 200);
    assert.match(res.body, /<title>lab &lt;sy&gt;<\/title>/);
    assert.match(res.body, /"preact":"\/vendor\/preact\.mjs"/);
    assert.match(res.body, /"uplot":"\/vendor\/uPlot\.esm\.js"/);
    assert.match(res.body, /page is not built/, "this pageDir has no main.js");
  });

  test("preact and uPlot come from node_modules; nothing else is served from disk", async () => {
    const uplot = await get(`${server.url}vendor/uPlot.esm.js`);
    assert.equal(uplot.status, 200);
    assert.match(uplot.type, /javascript/);
    assert.match(uplot.body, /export \{ uPlot as default \}|export default uPlot/);
    assert.equal((await get(`${server.url}vendor/preact-hooks.mjs`)).status, 200);
    assert.equal((await get(`${server.url}vendor/uPlot.min.css`)).status, 200);
    assert.equal((await get(`${server.url}app/..%2F..%2Fpackage.json`)).status, 404);
    assert.equal((await get(`${server.url}vendor/../package.json`)).status, 404);
  });

  test("the view as JSON, and as events: the current one at once, then each change", async () => {
    assert.deepEqual(JSON.parse((await get(`${server.url}api/view`)).body), { n: 1 });
    const stream = get(`${server.url}api/events`, { until: (b) => b.includes('"n":2') });
    await new Promise((r) => setTimeout(r, 200));
    state = { n: 2 };
    live.changed();
    const res = await stream;
    assert.match(res.type, /text\/event-stream/);
    assert.deepEqual(
      res.body
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6))),
      [{ n: 1 }, { n: 2 }],
    );
  });

  test("another Host (a name pointed at 127.0.0.1 by some site) and writes are refused", async () => {
    assert.equal((await get(`${server.url}api/view`, { host: "evil.example:80" })).status, 421);
    assert.equal((await get(`${server.url}api/view`, { method: "POST" })).status, 405);
    const port = new URL(server.url).port;
    assert.equal((await get(`${server.url}api/view`, { host: `localhost:${port}` })).status, 200);
  });

  test("a port in use is one line naming the flag", async () => {
    const port = Number(new URL(server.url).port);
    await assert.rejects(
      serveDashboard({
        host: "127.0.0.1",
        port,
        title: "",
        pageDir: "",
        current: () => "{}",
        subscribe: () => () => {},
      }),
      { message: `dashboard: 127.0.0.1:${port} is in use; pick another --port` },
    );
  });
});

describe("switchyard-lab dashboard", () => {
  test("--help exits 0; bad ports and arguments are usage errors; no lab is one line", async () => {
    const help = await runMain(["dashboard", "--help"]);
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /--port PORT +where to listen on 127\.0\.0\.1; 0 picks a free port \(default 7420\)/,
    );
    const refused = async (args: string[]) => {
      const r = await runMain(["dashboard", ...args]);
      assert.equal(r.code, 2, r.stderr);
      return r.stderr.split("\n")[0];
    };
    for (const port of ["http", "", "65536", "-1"])
      assert.equal(
        await refused([`--port=${port}`]),
        `switchyard-lab: dashboard: --port must be a port number 0-65535, got "${port}"`,
      );
    assert.equal(
      await refused(["now"]),
      'switchyard-lab: dashboard: unexpected argument "now" (it takes no arguments)',
    );
    const empty = mkdtempSync(join(tmpdir(), "dash-nolab-"));
    assert.deepEqual(await runMain(["dashboard", "--state-dir", empty, "--port", "0"]), {
      code: 1,
      stdout: "",
      stderr: `switchyard-lab: no lab in ${empty}; run switchyard-lab up\n`,
    });
  });
});

import assert from "node:assert/strict";
import * as dgram from "node:dgram";
import { test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { freePort, httpStatus, nxdomainUpstream, query, startApp } from "../src/testing/process.js";

const LAMEDUCK_MS = 4000;

/** Sequential UDP queries on one socket until `running()` is false; every query must get its reply. */
async function steadyLoad(port: number, running: () => boolean) {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  let answered = 0;
  const lost: number[] = [];
  for (let id = 1; running(); id = (id % 65535) + 1) {
    const got = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), 2000);
      const onMessage = (msg: Buffer) => {
        if (msg.length >= 2 && msg.readUInt16BE(0) === id) done(true);
      };
      const done = (ok: boolean) => {
        clearTimeout(timer);
        sock.off("message", onMessage);
        resolve(ok);
      };
      sock.on("message", onMessage);
      sock.send(query(id, "load.example.org"), port, "127.0.0.1");
    });
    if (got) answered++;
    else lost.push(id);
  }
  sock.close();
  return { answered, lost };
}

test("SIGTERM under load: /ready fails at once, DNS answers through the lameduck window, then exit 0", {
  timeout: 60_000,
}, async () => {
  const upstream = await nxdomainUpstream();
  const [dnsPort, healthPort, readyPort] = [await freePort(), await freePort(), await freePort()];
  const app = startApp(
    `.:${dnsPort} {
    health 127.0.0.1:${healthPort} {
        lameduck ${LAMEDUCK_MS / 1000}s
    }
    ready 127.0.0.1:${readyPort}
    forward . 127.0.0.1:${upstream.port}
}
`,
    ["-quiet"],
  );
  try {
    await eventually(`/ready\n${app.output()}`, async () => (await httpStatus(readyPort, "/ready")) === 200, {
      timeoutMs: 20_000,
    });
    let loading = true;
    const loads = [1, 2, 3].map(() => steadyLoad(dnsPort, () => loading));
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    app.child.kill("SIGTERM");
    await eventually("/ready to fail", async () => (await httpStatus(readyPort, "/ready")) !== 200, {
      timeoutMs: 2000,
    });
    assert.equal(await httpStatus(healthPort, "/health"), 200, "/health stays up during lameduck");
    // Keep querying for most of the window; the process must still be answering every query.
    await new Promise((r) => setTimeout(r, LAMEDUCK_MS - 1500 - (Date.now() - signalled)));
    loading = false;
    const results = await Promise.all(loads);
    for (const r of results) assert.deepEqual(r.lost, [], "no query is lost during lameduck");
    assert.ok(
      results.every((r) => r.answered > 10),
      JSON.stringify(results.map((r) => r.answered)),
    );
    const exit = await app.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, app.output());
    assert.ok(Date.now() - signalled >= LAMEDUCK_MS - 50, "the process waited out the lameduck window");
    assert.match(app.output(), /\[INFO\] SIGTERM: Shutting down servers then terminating/);
  } finally {
    app.child.kill("SIGKILL");
    upstream.close();
  }
});

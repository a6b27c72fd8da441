import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initialWindowSize, SendWindows } from "../../src/agent/kubelet-api/spdy/flow-control.js";

describe("SPDY send windows", () => {
  it("holds a stream to its window and the connection's until the peer grants more", async () => {
    const windows = new SendWindows(10_000);
    windows.open(1);
    assert.equal(windows.allowance(1, 100_000), initialWindowSize);
    windows.spend(1, initialWindowSize);
    assert.equal(windows.allowance(1, 10), 0);
    const reopened = windows.waitForWindow();
    windows.grant(1, 500);
    await reopened;
    // The stream has room again, but the connection (stream 0) is still spent.
    assert.equal(windows.allowance(1, 1000), 0);
    windows.grant(0, 300);
    assert.equal(windows.allowance(1, 1000), 300);
    windows.close();
  });

  it("moves open streams' windows with SETTINGS_INITIAL_WINDOW_SIZE", () => {
    const windows = new SendWindows(10_000);
    windows.open(1);
    windows.grant(0, 1 << 20);
    windows.spend(1, 1000);
    windows.setInitialStreamWindow(2 * initialWindowSize);
    assert.equal(windows.allowance(1, 1 << 20), 2 * initialWindowSize - 1000);
    windows.close();
  });

  it("stops enforcing windows for a peer that never sends WINDOW_UPDATE (moby/spdystream)", async () => {
    const windows = new SendWindows(20);
    windows.open(1);
    windows.spend(1, initialWindowSize);
    assert.equal(windows.allowance(1, 10), 0);
    await windows.waitForWindow();
    assert.equal(windows.allowance(1, 10), 10);
  });

  it("keeps enforcing windows for a peer that has granted one", async () => {
    const windows = new SendWindows(20);
    windows.open(1);
    windows.grant(1, 1);
    windows.spend(1, initialWindowSize + 1);
    const waited = windows.waitForWindow();
    const timeout = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 60));
    assert.equal(await Promise.race([waited.then(() => "woken"), timeout]), "still waiting");
    assert.equal(windows.allowance(1, 10), 0);
    windows.close();
    await waited;
  });
});

// The --config watch on a real filesystem: a write of new content, a kubelet-style ConfigMap update (a symlink
// swapped in the folder), and a touch that changes nothing.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { watchConfigFile } from "../src/config/watch-file.js";

const within = (ms: number, p: Promise<unknown>) =>
  Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);

test("new content written to the file: changed, once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "proxy-config-"));
  const file = join(dir, "config.conf");
  writeFileSync(file, "mode: iptables\n");
  let calls = 0;
  const changed = new Promise<void>((r) => watchConfigFile(file, "mode: iptables\n", () => r(void calls++)));
  utimesSync(file, new Date(), new Date());
  writeFileSync(file, "mode: iptables\n");
  assert.equal(await within(300, changed), false, "a touch or the same text is not a change");
  writeFileSync(file, "mode: nftables\n");
  assert.equal(await within(5000, changed), true);
  writeFileSync(file, "mode: ipvs\n");
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(calls, 1);
  rmSync(dir, { recursive: true, force: true });
});

test("a ConfigMap volume updated by the kubelet (the ..data symlink swapped): changed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "proxy-configmap-"));
  const version = (name: string, text: string) => {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "config.conf"), text);
  };
  version("..2026_12_01_1", "mode: iptables\n");
  symlinkSync("..2026_12_01_1", join(dir, "..data"));
  symlinkSync("..data/config.conf", join(dir, "config.conf"));
  let stop = () => {};
  const changed = new Promise<void>((r) => {
    stop = watchConfigFile(join(dir, "config.conf"), "mode: iptables\n", r);
  });
  version("..2026_12_01_2", "mode: nftables\n");
  symlinkSync("..2026_12_01_2", join(dir, "..data_tmp"));
  renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
  rmSync(join(dir, "..2026_12_01_1"), { recursive: true });
  assert.equal(await within(5000, changed), true);
  stop();
  rmSync(dir, { recursive: true, force: true });
});

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadKubeConfig } from "../../src/rest/kubeconfig.js";

function kubeconfigWith(user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}",
    "users:",
    "- name: u",
    `  user: ${user}`,
    "contexts:",
    "- name: ctx",
    "  context: {cluster: c, user: u}",
    "current-context: ctx",
    "",
  ].join("\n");
}

async function authorization(path: string): Promise<unknown> {
  const kc = loadKubeConfig({ kubeconfig: path, env: {} });
  const opts: { headers: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  return opts.headers.Authorization;
}

describe("loadKubeConfig", () => {
  test("kubectl's tokenFile (as kubeadm's kube-proxy kubeconfig has it), relative to the kubeconfig", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-kc-"));
    writeFileSync(join(dir, "token"), "abc123");
    writeFileSync(join(dir, "kubeconfig"), kubeconfigWith("{tokenFile: token}"));
    assert.equal(await authorization(join(dir, "kubeconfig")), "Bearer abc123");
  });

  test("an inline token still wins over a token file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-kc-"));
    writeFileSync(join(dir, "token"), "from-file");
    writeFileSync(join(dir, "kubeconfig"), kubeconfigWith("{token: inline, tokenFile: token}"));
    assert.equal(await authorization(join(dir, "kubeconfig")), "Bearer inline");
  });

  test("a missing file is one line naming what was tried", () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfig: "/nonexistent/kubeconfig", env: {} }),
      /^Error: kubeconfig \/nonexistent\/kubeconfig does not exist$/,
    );
  });
});

// The lab's admin client for the test control plane (client certificate from its PKI), and the objects these
// tests write through it (the app's testing entry, src/testing/api.ts, which the root's fault tests share).
import { Api as LabApi } from "@switchyard/testbed";
import type { Api } from "../src/testing/api.js";

export * from "../src/testing/api.js";

export function apiClient(server: string, stateDir: string): Api {
  return new LabApi(server, stateDir);
}

import type { Scenario } from "./scenario.js";

export const proxyDown: Scenario = {
  name: "proxy-down",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario proxy-down is not written yet"));
  },
};

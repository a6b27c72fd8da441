import type { Scenario } from "./scenario.js";

export const hints: Scenario = {
  name: "hints",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario hints is not written yet"));
  },
};

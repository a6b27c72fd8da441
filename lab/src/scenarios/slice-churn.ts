import type { Scenario } from "./scenario.js";

export const sliceChurn: Scenario = {
  name: "slice-churn",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario slice-churn is not written yet"));
  },
};

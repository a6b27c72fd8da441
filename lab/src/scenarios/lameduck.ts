import type { Scenario } from "./scenario.js";

export const lameduck: Scenario = {
  name: "lameduck",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario lameduck is not written yet"));
  },
};

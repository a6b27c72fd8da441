import type { Scenario } from "./scenario.js";

export const scale: Scenario = {
  name: "scale",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario scale is not written yet"));
  },
};

import type { Scenario } from "./scenario.js";

export const topologyAuto: Scenario = {
  name: "topology-auto",
  summary: "(not written yet)",
  claims: [],
  run() {
    return Promise.reject(new Error("scenario topology-auto is not written yet"));
  },
};

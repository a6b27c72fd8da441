import { hints } from "./hints.js";
import { lameduck } from "./lameduck.js";
import { proxyDown } from "./proxy-down.js";
import { scale } from "./scale.js";
import type { Scenario } from "./scenario.js";
import { sliceChurn } from "./slice-churn.js";
import { topologyAuto } from "./topology-auto.js";

export const scenarios: readonly Scenario[] = [sliceChurn, hints, topologyAuto, lameduck, scale, proxyDown];

export function scenarioByName(name: string): Scenario {
  const s = scenarios.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario "${name}"; there are ${scenarios.map((x) => x.name).join(", ")}`);
  return s;
}

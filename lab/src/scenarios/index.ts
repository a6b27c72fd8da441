import { hints } from "./hints/hints.js";
import type { Scenario } from "./kit/scenario.js";
import { lameduck } from "./lameduck/lameduck.js";
import { proxyDown } from "./proxy-down/proxy-down.js";
import { scale } from "./scale/scale.js";
import { sliceChurn } from "./slice-churn/slice-churn.js";
import { topologyAuto } from "./topology-auto/topology-auto.js";

export const scenarios: readonly Scenario[] = [sliceChurn, hints, topologyAuto, lameduck, scale, proxyDown];

export function scenarioByName(name: string): Scenario {
  const s = scenarios.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario "${name}"; there are ${scenarios.map((x) => x.name).join(", ")}`);
  return s;
}

// What other packages' benchmarks use (`@switchyard/lab/scenarios`): the registry above, the report as printed, and
// the connect-timing script the proxy benchmark runs in its client namespace too.
export { CONNECT_TIMES_SCRIPT } from "./kit/probes.js";
export { formatScenarioReport } from "./kit/report.js";
export type { ClaimFinding, Scenario, ScenarioContext, ScenarioReport } from "./kit/scenario.js";

import { defaultDashboardPort, startDashboard } from "../dashboard/dashboard.js";
import { migrationProgressPath } from "../migrate/progress-file.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { portFlag } from "./usage.js";

/** Serves the page until SIGINT or SIGTERM. */
async function runDashboard(inv: Invocation): Promise<number> {
  const dashboard = await startDashboard({
    stateDir: labDir(inv.string("state-dir")),
    // 0 is a port here: the kernel picks a free one.
    port: portFlag("dashboard", "port", inv.string("port"), 0) ?? defaultDashboardPort,
  });
  console.log(`switchyard-lab dashboard: ${dashboard.url}  (Ctrl-C stops it)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await dashboard.stop();
  return 0;
}

export const dashboardCommand: Command = {
  name: "dashboard",
  group: "Looking inside",
  summary: "a local page that follows the lab live: Services, slices and hints, proxies, DNS, a migration",
  description:
    "Serves a page that follows the lab live, on either runtime, at http://127.0.0.1:PORT/ (printed when it is " +
    "up; Ctrl-C stops it): nodes and zones; Services, their EndpointSlices and endpoints with conditions and " +
    "hints, and a timeline of each Service's endpoint counts and hint state; per node the proxy's mode, rules " +
    "in the kernel, last sync, sync durations and network programming latency " +
    "(kubeproxy_network_programming_duration_seconds); the DNS pods' queries per second, cache hit ratio and " +
    "lameduck state; a running `migrate` node by node, read from its progress file " +
    `(${migrationProgressPath("<state-dir>")}); and a warning when the DNS lameduck is shorter than the ` +
    "proxies' network programming p99 (claim C16).",
  flags: [
    {
      name: "port",
      value: "PORT",
      default: String(defaultDashboardPort),
      help: "where to listen on 127.0.0.1; 0 picks a free port",
    },
    labStateDirFlag,
  ],
  examples: ["switchyard-lab dashboard", "switchyard-lab dashboard --port 8080 --state-dir /tmp/lab"],
  run: runDashboard,
};

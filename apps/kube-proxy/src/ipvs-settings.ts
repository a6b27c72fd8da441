// IPVS mode's sysctls through the node-settings applier, in upstream's words: NewProxier
// runs once per family (IPv4 first), each run ensuring every sysctl with a "Changed sysctl"
// line at V(1) for what it wrote, and a refused write ends start-up as
// "unable to create proxier: [unable to create ipv4 proxier: ]can't set sysctl …".
import {
  applyNodeSettings,
  connReuseMode,
  ensureSysctlMessage,
  type IPFamily,
  IPVS_CONN_REUSE_MODE,
  ipvsSettings,
  KernelVersionError,
  NodeSettingError,
  type ProxierLogger,
  readKernelVersion,
  type SettingFiles,
  sysctlName,
} from "@switchyard/proxier";
import type { ResolvedOptions } from "./config/config.js";

/** The one-line start-up error; main prints it and exits 1, as upstream's Run error does. */
export class IPVSSettingsError extends Error {
  override name = "IPVSSettingsError";
}

const v = (log: ProxierLogger, n: number) => log.v?.(n) ?? log;

/** One family's NewProxier sysctl steps; the error text upstream's NewProxier returns. */
async function ensureForFamily(
  files: SettingFiles,
  strictARP: boolean,
  log: ProxierLogger,
  ipFamily: IPFamily,
): Promise<void> {
  let kernel: Awaited<ReturnType<typeof readKernelVersion>>;
  try {
    kernel = await readKernelVersion(files);
  } catch (err) {
    if (!(err instanceof KernelVersionError)) throw err;
    throw new IPVSSettingsError(`failed to get kernel version: ${err.message}`);
  }
  const mode = connReuseMode(kernel);
  if (mode === "unsupported") {
    log.error("Can't set sysctl, kernel version doesn't satisfy minimum version requirements", {
      ipFamily,
      sysctl: sysctlName(IPVS_CONN_REUSE_MODE),
      minimumKernelVersion: "4.1",
    });
  } else if (mode === "left-as-is") {
    v(log, 2).info("Left as-is", { ipFamily, sysctl: sysctlName(IPVS_CONN_REUSE_MODE) });
  }
  try {
    // An unreadable value counts as 0, as Go's zero value does in upstream's log line.
    await applyNodeSettings(files, ipvsSettings(strictARP, kernel), (c) =>
      v(log, 1).info("Changed sysctl", {
        ipFamily,
        name: sysctlName(c.key),
        before: c.before ?? 0,
        after: c.after,
      }),
    );
  } catch (err) {
    if (!(err instanceof NodeSettingError)) throw err;
    throw new IPVSSettingsError(ensureSysctlMessage(err));
  }
}

export async function applyIPVSSettings(
  o: ResolvedOptions,
  families: readonly IPFamily[],
  files: SettingFiles,
  logger: ProxierLogger,
): Promise<void> {
  // Upstream's dual-stack constructor names the family whose proxier failed; single-stack does not.
  const dual = families.length > 1;
  for (const family of families) {
    try {
      await ensureForFamily(files, o.ipvs.strictARP, logger, family);
    } catch (err) {
      if (!(err instanceof IPVSSettingsError)) throw err;
      const which = dual ? `unable to create ${family === "IPv4" ? "ipv4" : "ipv6"} proxier: ` : "";
      throw new IPVSSettingsError(`unable to create proxier: ${which}${err.message}`);
    }
  }
}

// kube-proxy's command line, with upstream's flag names. As upstream, flags fill the
// configuration only when there is no --config; with one, only --hostname-override and the
// logging flags (--v, --vmodule, --logging-format, ...) still apply, and the other flags given are reported as
// ignored. Values are read as pflag reads them; what upstream's validation refuses is refused once the
// configuration is complete (config/validate.ts).

import { type FlagSet, usage as flagUsage, parseFlags, versionAsked } from "@switchyard/kube/flags";
import { appendPortIfNeeded, DEFAULT_PORTS, type ProxyConfig } from "../config/config.js";
import { SPEC } from "./flag-spec.js";
import type { ProxyFlag, ProxyFlags } from "./proxy-flags.js";

export { FlagError, parseHostPort } from "@switchyard/kube/flags";

export interface CommandLine {
  /** --config path, if any. */
  readonly configFile: string | undefined;
  readonly cleanup: boolean;
  /** --init-only: apply the node settings that need root, then exit. */
  readonly initOnly: boolean;
  /** --master: the API server's address, replacing the kubeconfig's server; "" when not given. */
  readonly master: string;
  readonly help: boolean;
  /** --healthz-port and --metrics-port (upstream's defaults when not given). */
  readonly deprecatedPorts: { readonly healthz: number; readonly metrics: number };
  /** --write-config-to path: write the configuration there and exit. */
  readonly writeConfigTo: string | undefined;
  /** --version: "" when not asked, "true" or "raw". */
  readonly version: "" | "true" | "raw";
  /** Names of the flags given (without dashes), in order. */
  readonly given: readonly string[];
  /** Writes the flags given into a config: all of them without --config, the survivors with it. */
  apply(config: ProxyConfig, withConfigFile: boolean): ProxyConfig;
}

const FLAG_SET: FlagSet<ProxyFlags> = {
  dialect: "pflag",
  flags: SPEC,
  defaults: {
    cleanup: false,
    initOnly: false,
    master: "",
    help: false,
    healthzPort: DEFAULT_PORTS.healthzBindAddress,
    metricsPort: DEFAULT_PORTS.metricsBindAddress,
  },
  underscoreAsDash: true,
};

const flagNamed = (name: string): ProxyFlag | undefined => SPEC.find((f) => f.name === name);

/** Parses --name=value, --name value, bare booleans and -v=2; `_` in a name reads as `-`, as upstream's flag set. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  // Every value is read and checked here, so a bad flag fails before anything starts.
  const { values, given } = parseFlags(FLAG_SET, argv);
  return {
    configFile: values.config,
    writeConfigTo: values.writeConfigTo,
    deprecatedPorts: { healthz: values.healthzPort, metrics: values.metricsPort },
    cleanup: values.cleanup,
    initOnly: values.initOnly,
    master: values.master,
    help: values.help,
    version: versionAsked(values.version),
    given,
    apply(config, withConfigFile) {
      const c = structuredClone(config);
      // In the order given: where two flags set one field (--iptables-min-sync-period and
      // --nftables-min-sync-period), the later one wins, as upstream.
      for (const name of given) {
        const flag = flagNamed(name);
        if (flag?.field === undefined || (withConfigFile && !flag.overridesConfig)) continue;
        const toConfig = flag.toConfig as ((c: ProxyConfig, value: unknown) => void) | undefined;
        toConfig?.(c, values[flag.field]);
      }
      return c;
    },
  };
}

/** Flags given that are accepted but not acted on, with why: "--profiling (there is no pprof handler)". */
export function notActedOn(cl: CommandLine): string[] {
  return [...new Set(cl.given)].flatMap((name) => {
    const why = flagNamed(name)?.notActedOn;
    return why ? [`--${name} (${why})`] : [];
  });
}

/** Flags given that a config file makes ineffective (upstream ignores them silently). */
export function ignoredWithConfig(cl: CommandLine): string[] {
  return cl.given.filter((name) => {
    const f = flagNamed(name);
    return f?.toConfig !== undefined && !f.overridesConfig;
  });
}

export function usage(program: string): string {
  return flagUsage(FLAG_SET, program);
}

/**
 * Upstream's Complete() without a config file and without --write-config-to: --healthz-port/--metrics-port 0
 * disables that server, and a bind address given without a port gets the flag's port (their defaults when
 * unset), so `--metrics-bind-address=0.0.0.0` serves on 0.0.0.0:10249.
 */
export function withDeprecatedPorts(c: ProxyConfig, ports: CommandLine["deprecatedPorts"]): ProxyConfig {
  const address = (addr: string, port: number) => (port === 0 ? "" : appendPortIfNeeded(addr, port));
  return {
    ...c,
    healthzBindAddress: address(c.healthzBindAddress, ports.healthz),
    metricsBindAddress: address(c.metricsBindAddress, ports.metrics),
  };
}

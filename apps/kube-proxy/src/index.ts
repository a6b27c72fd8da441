export { parseGoDuration } from "@switchyard/basics";
export { type App, type AppOptions, cleanupAndExit, nodeNameOf, startApp } from "./app.js";
export {
  type CommandLine,
  FlagError,
  ignoredWithConfig,
  parseCommandLine,
  parseHostPort,
  usage,
} from "./cli/flags.js";
export { defaultConfig, type ProxyConfig, type ResolvedOptions, resolve } from "./config/config.js";
export { CONFIG_API_VERSION, CONFIG_KIND, ConfigError, parseConfigFile } from "./config/config-file.js";
export { FAULTS_ENV, withInjectedFaults } from "./faults.js";
export { loadConfiguration, type MainIO, main, PROGRAM } from "./main.js";
export { localDetector } from "./network.js";
export { fetchNode, type NodeInfo } from "./node-info.js";
export { type ServiceCIDRWatch, serviceCIDRs, watchServiceCIDRs } from "./service-cidrs.js";

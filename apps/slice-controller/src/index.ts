export { parseGoDuration } from "@switchyard/kube";
export { type App, type AppOptions, startApp } from "./app.js";
export {
  type ControllerFlags,
  DEFAULT_FLAGS,
  FlagError,
  parseFlags,
  parseHostPort,
  usage,
} from "./cli/flags.js";
export { EndpointSliceController, StaleInformerCacheError } from "./endpointslice-controller.js";
export { type MainIO, main } from "./main.js";
export { ControllerMetrics, MirroringMetrics } from "./metrics.js";
export { MirroringController } from "./mirroring-controller.js";
export { selectorMatches } from "./selector.js";
export { TriggerTimes } from "./trigger-times.js";

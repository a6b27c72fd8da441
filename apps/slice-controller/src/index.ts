export { parseGoDuration } from "@switchyard/basics";
export { type App, type AppOptions, startApp } from "./app.js";
export {
  ENDPOINTSLICE_CONTROLLER,
  type EnabledControllers,
  enabledControllers,
  MIRRORING_CONTROLLER,
} from "./cli/controllers.js";
export {
  type ControllerFlags,
  DEFAULT_FLAGS,
  FlagError,
  parseFlags,
  parseHostPort,
  usage,
} from "./cli/flags.js";
export { IGNORED_FLAGS, ignoredFlagNotes } from "./cli/ignored-flags.js";
export { EndpointSliceController, StaleInformerCacheError } from "./endpointslice-controller.js";
export { type MainIO, main } from "./main.js";
export { ControllerMetrics, MirroringMetrics } from "./metrics.js";
export { MirroringController } from "./mirroring-controller.js";
export { selectorMatches } from "./selector.js";
export { ThrottledClient } from "./throttled-client.js";
export { TriggerTimes } from "./trigger-times.js";

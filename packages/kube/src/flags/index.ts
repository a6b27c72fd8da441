// One flag engine for the apps: each flag declared once in a typed table, read in pflag's or Go flag's dialect.
export { FlagError } from "./flag-error.js";
export type {
  CustomKind,
  Dialect,
  FieldFlag,
  FlagSet,
  FlagSpec,
  IntKind,
  Kind,
  UnstoredFlag,
} from "./flag-spec.js";
export { parseGoBool, parseGoBoolMap, parseGoFloat, parseGoInt } from "./go-values.js";
export { parseHostPort } from "./host-port.js";
export { type ParsedFlags, parseFlags } from "./parse-flags.js";
export { didYouMean, editDistance, suggestionsFor } from "./suggest.js";
export { usage } from "./usage.js";
export {
  checkVersionValue,
  type ProgramVersion,
  VERSION_FLAG,
  versionAsked,
  versionText,
} from "./version-flag.js";

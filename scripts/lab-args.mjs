// What `npm run lab ARGS` runs: `switchyard-lab ARGS` when the first argument is a command (`npm run lab down`,
// `npm run lab status`), `switchyard-lab up ARGS` otherwise (`npm run lab`, `npm run lab -- --nodes 5`). A typo
// then reaches the CLI, which refuses it with a suggestion, instead of bringing a lab up.
export function labCommandLine(args) {
  return args[0] !== undefined && !args[0].startsWith("-") ? [...args] : ["up", ...args];
}

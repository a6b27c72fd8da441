// What other packages' tests use of the kind runtime (`@switchyard/lab/kind`): the status text of a kind lab.
export { kindStatusText } from "./status-text.js";

export { main } from "./cli/main.js";

import { refuseArgs } from "../../plugin/no-args.js";
import type { Setup } from "../../plugin/setup.js";

/**
 * `debug`: the server this block listens on stops turning a chain's exception into SERVFAIL; the exception
 * ends the process with its stack trace, as an unrecovered panic ends CoreDNS. No handler: it only sets the
 * server's `debug` flag. Every stanza is checked, as upstream's setup loops over all of them.
 */
export const setupDebug: Setup = (ctx) => {
  for (const stanza of ctx.stanzas) refuseArgs(stanza, "debug");
  ctx.server.debug = true;
  return {};
};

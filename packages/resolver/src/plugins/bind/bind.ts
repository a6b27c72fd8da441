import { networkInterfaces } from "node:os";
import { parseGoIP } from "@switchyard/basics";
import type { Stanza } from "../../corefile/parse.js";
import { PluginError } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";

/** Interface name to its addresses, as os.networkInterfaces() reports them; injectable for tests. */
export type InterfaceTable = Record<string, { address: string; family: string }[] | undefined>;

/**
 * `bind ADDRESS|IFACE... { except ADDRESS|IFACE... }`: the block listens on these addresses only. Each stanza
 * adds its own addresses minus its own `except`s; an interface stands for all of its addresses, IPv6
 * link-local ones with `%IFACE` appended. Errors carry no position, as upstream's do.
 */
export function bindHosts(stanzas: readonly Stanza[], interfaces: InterfaceTable): string[] {
  const all: string[] = [];
  for (const stanza of stanzas) {
    if (stanza.args.length === 0)
      throw new PluginError("bind", "at least one address or interface name is expected");
    let except: string[] = [];
    for (const line of stanza.block) {
      if (line.name !== "except")
        throw new PluginError("bind", `invalid option ${JSON.stringify(line.name)}`);
      if (line.args.length === 0)
        throw new PluginError(
          "bind",
          "at least one address or interface must be given to except subdirective",
        );
      except = line.args;
    }
    const excluded = expand(except, interfaces);
    for (const host of expand(stanza.args, interfaces)) if (!excluded.includes(host)) all.push(host);
  }
  return all;
}

function expand(args: readonly string[], interfaces: InterfaceTable): string[] {
  return args.flatMap((arg) => {
    const entries = Object.hasOwn(interfaces, arg) ? interfaces[arg] : undefined;
    if (entries) return entries.map((e) => (isLinkLocalV6(e.address) ? `${e.address}%${arg}` : e.address));
    // A written address is kept as written: upstream compares and listens on the text itself.
    if (!parseGoIP(arg))
      throw new PluginError("bind", `not a valid IP address or interface name: ${JSON.stringify(arg)}`);
    return [arg];
  });
}

/** fe80::/10 and ff02::/16, the link-local ranges Go's IsLinkLocalUnicast and IsLinkLocalMulticast test. */
function isLinkLocalV6(address: string): boolean {
  const ip = address.includes(":") ? parseGoIP(address.replace(/%.*$/, "")) : undefined;
  if (!ip || address.includes("%")) return false;
  const first = ip[0] as number;
  const second = ip[1] as number;
  return (first === 0xfe && (second & 0xc0) === 0x80) || (first === 0xff && (second & 0x0f) === 0x02);
}

export interface BindDeps {
  /** The host's interfaces; os.networkInterfaces() when absent. */
  interfaces?: () => InterfaceTable;
}

/** No handler: the addresses decide which listeners the block's zones are served on. */
export const setupBind: Setup<BindDeps> = (ctx) => {
  const table = ctx.deps.interfaces?.() ?? (networkInterfaces() as InterfaceTable);
  ctx.server.listenHosts = bindHosts(ctx.stanzas, table);
  return {};
};

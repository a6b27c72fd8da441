import { defaultRegistry } from "@switchyard/resolver";

/** `-plugins`: the listing CoreDNS prints, with this build's plugins. */
export function pluginsText(): string {
  const names = [...defaultRegistry().keys()].sort().map((n) => `  dns.${n}`);
  return [
    "Server types:",
    "  dns",
    "",
    "Caddyfile loaders:",
    "  flag",
    "  default",
    "",
    "Other plugins:",
    ...names,
    "",
  ].join("\n");
}

import { goIPString, isIPv4Mapped, parseGoIP } from "@switchyard/basics";

const V4_SUFFIX = ".in-addr.arpa.";
const V6_SUFFIX = ".ip6.arpa.";

/**
 * The address a reverse name spells, as CoreDNS's dnsutil.ExtractAddressFromReverse reads it, or "" when
 * it spells none. Its looseness is kept because it decides which PTR queries the hosts plugin answers:
 * the labels are reversed and joined as they are, and under ip6.arpa. every four labels make one group,
 * any labels left over beyond whole groups being dropped.
 */
export function addressFromReverse(name: string): string {
  if (name.endsWith(V4_SUFFIX)) {
    const labels = name.slice(0, -V4_SUFFIX.length).split(".").reverse();
    const ip = parseGoIP(labels.join("."));
    return ip && isIPv4Mapped(ip) ? goIPString(ip) : "";
  }
  if (name.endsWith(V6_SUFFIX)) {
    const labels = name.slice(0, -V6_SUFFIX.length).split(".").reverse();
    const groups: string[] = [];
    for (let i = 0; i + 4 <= labels.length; i += 4) groups.push(labels.slice(i, i + 4).join(""));
    const ip = parseGoIP(groups.join(":"));
    return ip ? goIPString(ip) : "";
  }
  return "";
}

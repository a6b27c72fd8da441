// The ServiceCIDRs (networking.k8s.io/v1) as the proxiers want them: every CIDR of every
// object, then one family's share for each proxier. kube-proxy keeps a running set of CIDR
// strings; we recompute the union from the whole cache instead, so two objects that share a
// CIDR cannot remove it for each other.
import { type IPFamily, parseCIDR, type ServiceCIDR } from "@switchyard/basics";

/** Every CIDR of the objects, once each, sorted so that equal sets compare equal. */
export function allServiceCIDRs(objects: readonly ServiceCIDR[]): string[] {
  return [...new Set(objects.flatMap((o) => o.spec?.cidrs ?? []))].sort();
}

export interface FamilyCIDRs {
  readonly cidrs: string[];
  /** Strings that are not CIDRs; written into a rule they would fail every sync. */
  readonly invalid: string[];
}

/** The CIDRs of one family, sorted and de-duplicated. */
export function serviceCIDRsOfFamily(cidrs: readonly string[], family: IPFamily): FamilyCIDRs {
  const out = new Set<string>();
  const invalid: string[] = [];
  for (const text of cidrs) {
    const parsed = parseCIDR(text);
    if (parsed === null) invalid.push(text);
    else if (parsed.ip.family === family) out.add(text.trim());
  }
  return { cidrs: [...out].sort(), invalid };
}

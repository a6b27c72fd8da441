import { familyOf } from "@switchyard/basics";
import type { HttpRestClient } from "@switchyard/kube";

/**
 * The address families the cluster gives ClusterIPs in, the primary first: those of the `kubernetes` ServiceCIDR
 * object, which kube-apiserver writes from --service-cluster-ip-range (two for a dual-stack cluster). Read from the
 * API, so it holds on either runtime.
 */
export async function serviceFamilies(client: HttpRestClient): Promise<("IPv4" | "IPv6")[]> {
  const cidr = await client.call<{ spec?: { cidrs?: string[] } }>(
    "GET",
    "/apis/networking.k8s.io/v1/servicecidrs/kubernetes",
  );
  return (cidr.spec?.cidrs ?? []).map((c) => familyOf(c));
}

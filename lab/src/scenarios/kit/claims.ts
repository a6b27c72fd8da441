/**
 * The claims of docs/claims.md, each restated in one line, so a scenario's report can print the claim next to the
 * number it measured. Ids are the page's.
 */
export const claims: Readonly<Record<string, string>> = {
  C1: "a 5000-pod Service has 50 slices; one pod dying rewrites one slice and leaves 49 untouched",
  C2: "the controller fills slices that have room before creating new ones and merges sparse slices only conservatively",
  C3: "slices are cut per (Service, port set, address family), so ports or dual-stack mean more slices",
  C4: "iptables rules grow linearly with endpoints; partial sync cut sync latency several times",
  C5: "with Auto hints, 2 endpoints in zone A and 20 in zone B overload zone A; hints are withheld when shares do not match, and a cluster near the threshold flaps",
  C6: "trafficDistribution is read by the controller, not the proxy; PreferSameNode fills node and zone hints, PreferSameZone only zones",
  C7: "PreferSameNode/PreferSameZone fill hints as asked, without the Auto balance check",
  C8: "the proxy uses node hints only if every ready endpoint has one and one names this node",
  C9: "fallback: ready endpoint on this node, then in this zone, then all; an unready local pod is skipped",
  C10: "10 pods on 100 nodes with PreferSameNode send about 90% of traffic down the zone fallback",
  C11: "PreferSameNode concentrates a node's clients on its one local pod",
  C12: "the proxy is not in the data path: if it dies, traffic keeps flowing on the installed rules; only updates stop",
  C13: "iptables' probabilities 1/n, 1/(n-1), ..., 1 give a uniform spread",
  C14: "IPVS looks services up in a hash table: lookup cost does not grow with the number of Services",
  C15: "with minSyncPeriod 0, deleting a 100-pod Deployment rewrites the rules 100 times; 1 s batches them",
  C16: "if DNS lameduck is shorter than the proxy's propagation delay, queries go to a DNS pod that already exited",
  C17: "if the proxy is broken, DNS fails first, because pods reach DNS through the kube-dns ClusterIP",
  C18: "IPVS mode is deprecated in v1.35 (and said to be removed in v1.36)",
  C19: "iptables matches services linearly; nftables looks them up in a verdict map, close to O(1)",
  C20: "iptables-restore grows with the ruleset (seconds with tens of thousands of Services); nftables sends only the delta",
  C21: "nftables picks an endpoint with one numgen random mod N vmap rule instead of a chain of probability rules",
  C22: "an nftables transaction applies whole or not at all",
  C23: "the first sync of a large cluster is still big in nftables mode, about as large as iptables' initial restore",
};

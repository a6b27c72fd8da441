// The fixture cluster rendered for node-1 by the proxier's own renderers, into its fakes: what the kernel
// listings in fixtures/ were loaded from, and what a parsed listing must load back to.
import {
  EndpointsChangeTracker,
  ensureJumpChains,
  renderIPTables,
  renderNFTables,
  ServiceChangeTracker,
} from "@switchyard/proxier";
import { FakeIPTables, FakeNFTables } from "@switchyard/proxier/trace";
import { CLUSTER_CIDR, NODE, NODE_LABELS, SERVICE_CIDR, services, slices } from "./fixture-cluster.js";

const common = {
  family: "IPv4" as const,
  nodeName: NODE.name,
  nodeLabels: NODE_LABELS,
  nodeIP: NODE.ip,
  masqueradeBit: 14,
  localDetector: { mode: "ClusterCIDR" as const, cidr: CLUSTER_CIDR },
};

function maps() {
  const sct = new ServiceChangeTracker("IPv4");
  for (const s of services) sct.update(undefined, s);
  const ect = new EndpointsChangeTracker({ family: "IPv4", nodeName: NODE.name });
  for (const s of slices) ect.endpointSliceUpdate(s, false);
  return { services: sct.apply().services, endpoints: ect.apply().endpoints, now: 0 };
}

/** nftables mode: the fake holding the rendered table. */
export function renderedNFTables(): FakeNFTables {
  const nft = new FakeNFTables("ip", "kube-proxy");
  const options = { ...common, nodePortAddresses: [NODE.ip], serviceCIDRs: [SERVICE_CIDR] };
  nft.run(renderNFTables(options, maps()).transaction);
  return nft;
}

/** iptables mode: the fake holding the jump rules and the rendered chains. */
export function renderedIPTables(): FakeIPTables {
  const ipt = new FakeIPTables();
  ensureJumpChains(ipt);
  const options = {
    ...common,
    nodePortAddresses: "all" as const,
    localhostNodePorts: true,
    randomFully: true,
  };
  ipt.restore(renderIPTables(options, maps()).restore);
  return ipt;
}

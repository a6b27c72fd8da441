// What the eBPF renderer needs to know about the node it renders for.
import type { IPFamily } from "@switchyard/basics";

export interface EBPFOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  /** Read for topology hints (the zone label). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** Addresses of this family NodePorts answer on (resolved by the caller from --nodeport-addresses). */
  readonly nodePortIPs: readonly string[];
  /**
   * The node's address of this family: when a load-balancer Service's source ranges hold it, its VIPs are admitted
   * as sources too (kube-proxy's allowFromNode). Without it they are not.
   */
  readonly nodeIP?: string;
}

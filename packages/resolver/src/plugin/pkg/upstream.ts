import type { Message } from "../../wire/message.js";

/**
 * Resolves a name through the whole server again, as CoreDNS's plugin/pkg/upstream does: kubernetes for an
 * ExternalName target outside its zone, template for a CNAME target, loop for its probe.
 */
export type Upstream = (name: string, qtype: number) => Promise<Message | undefined>;

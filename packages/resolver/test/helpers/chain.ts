import assert from "node:assert/strict";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, Peer } from "../../src/plugin/handler.js";
import type { Setup } from "../../src/plugin/setup.js";
import { defaultRegistry } from "../../src/registry.js";
import type { Site } from "../../src/server/dispatch.js";
import { dispatch } from "../../src/server/dispatch.js";
import { answerFast } from "../../src/server/fast-path.js";
import { decodeMessage } from "../../src/wire/decode.js";
import type { Transport } from "../../src/wire/edns.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";

export const LOCAL_PEER: Peer = { address: "127.0.0.1", port: 5300, family: "IPv4" };

/**
 * One server block built from `body` (the lines inside `.:53 { }`) with the real registry, and `backend`
 * put in as the directive `forward` (so it sits where forward does in plugin.cfg). Tests only.
 */
export function chainOf(body: string, backend?: Handler, metrics = new Metrics()) {
  const registry = new Map<string, Setup>(defaultRegistry() as Map<string, Setup>);
  if (backend) registry.set("forward", () => ({ plugin: () => backend }));
  const text = `.:53 {\n${body}\n${backend ? " forward\n" : ""}}\n`;
  const built = buildConfig(parseCorefile(text, { env: {} }), {
    registry,
    deps: { metrics },
  });
  const sites = built.servers[0]?.sites ?? [];
  return { sites, metrics };
}

/** The decoded reply the full path gives, or undefined when the packet was dropped. */
export async function askFull(
  sites: readonly Site[],
  query: Message,
  remote: Peer = LOCAL_PEER,
  transport: Transport = "udp",
): Promise<Message | undefined> {
  const out = await dispatch(encodeMessage(query), { sites, server: "dns://:53", transport, remote });
  if (!out.reply) return undefined;
  const d = decodeMessage(out.reply);
  assert.equal(d.kind, "message");
  return d.kind === "message" ? d.message : undefined;
}

/** The reply the fast path gives, decoded, or undefined when it leaves the query to the full path. */
export function askFast(sites: readonly Site[], query: Message): Message | undefined {
  const out = answerFast(encodeMessage(query), sites, "dns://:53", "udp");
  if (!out?.reply) return undefined;
  const d = decodeMessage(out.reply);
  assert.equal(d.kind, "message");
  return d.kind === "message" ? d.message : undefined;
}

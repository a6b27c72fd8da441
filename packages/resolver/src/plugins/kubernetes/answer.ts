import type { Upstream } from "../../plugin/pkg/upstream.js";
import { matchZone } from "../../plugin/zones.js";
import { Rcode } from "../../wire/constants.js";
import type { Message, Question, ResourceRecord } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { isSubdomain, zoneInQueryCase } from "../../wire/name.js";
import type { ClusterView } from "./cluster-view.js";
import type { Lookup } from "./lookup.js";
import { lookup } from "./lookup.js";
import type { KubernetesOptions } from "./options.js";
import { soaRecord } from "./soa.js";

/**
 * What the plugin does with a query: write `reply`, or pass it on (`next`: outside our zones, or a name
 * error in a fallthrough zone), or return an rcode without writing (REFUSED for transfers).
 */
export type Outcome =
  /** `pure`: the reply depends on nothing but the question and the cluster view (no upstream was asked). */
  | { action: "reply"; reply: Message; pure: boolean }
  | { action: "next" }
  | { action: "rcode"; rcode: number };

/** The kubernetes plugin's whole decision for one request, with the cluster and upstream injected. */
export async function answer(
  view: ClusterView,
  opts: KubernetesOptions,
  request: Message,
  upstream?: Upstream,
): Promise<Outcome> {
  const q = request.question[0] as Question;
  const matched = matchZone(q.name, opts.zones);
  if (matched === undefined) return { action: "next" };
  const zone = zoneInQueryCase(q.name, matched);
  const result = lookup(view, opts, { qname: q.name, qtype: q.type, zone });

  if (result.kind === "refused") return { action: "rcode", rcode: Rcode.REFUSED };
  if (result.kind === "nxdomain") {
    if (fallsThrough(opts, q.name)) return { action: "next" };
    // Before the caches sync a miss may be wrong; SERVFAIL makes clients retry instead of caching it.
    const rcode = view.hasSynced() ? Rcode.NXDOMAIN : Rcode.SERVFAIL;
    return { action: "reply", reply: negative(request, view, opts, zone, rcode), pure: true };
  }
  if (result.kind === "nodata")
    return { action: "reply", reply: negative(request, view, opts, zone, Rcode.NOERROR), pure: true };
  const pure = result.upstream.length === 0;

  const { answer: records, tc } = await completeUpstream(result, upstream);
  if (records.length === 0)
    return { action: "reply", reply: negative(request, view, opts, zone, Rcode.NOERROR), pure };
  const reply = replyTo(request);
  reply.aa = true;
  reply.tc = tc;
  reply.answer = records;
  reply.additional = result.extra;
  return { action: "reply", reply, pure };
}

function fallsThrough(opts: KubernetesOptions, name: string): boolean {
  if (!opts.fallthrough) return false;
  if (opts.fallthrough.length === 0) return true;
  return opts.fallthrough.some((z) => isSubdomain(name, z));
}

/** NXDOMAIN, NODATA or SERVFAIL with the zone SOA in authority, AA set. */
function negative(
  request: Message,
  view: ClusterView,
  opts: KubernetesOptions,
  zone: string,
  rcode: number,
): Message {
  const reply = replyTo(request, rcode);
  reply.aa = true;
  reply.authority = [soaRecord(view, opts, zone)];
  return reply;
}

/** Adds upstream answers after CNAMEs that leave the zone; a failed lookup drops its CNAME. */
async function completeUpstream(
  result: Extract<Lookup, { kind: "records" }>,
  upstream: Upstream | undefined,
): Promise<{ answer: ResourceRecord[]; tc: boolean }> {
  const answer = [...result.answer];
  let tc = false;
  for (const need of result.upstream) {
    if (!upstream) continue;
    let reply: Message | undefined;
    try {
      reply = await upstream(need.target, need.qtype);
    } catch {
      reply = undefined;
    }
    if (!reply) continue;
    tc ||= reply.tc;
    answer.push(need.cname, ...reply.answer);
  }
  return { answer, tc };
}

import { isIPv4, isIPv6 } from "node:net";
import { ClassIN } from "../../wire/constants.js";
import type { ResourceRecord } from "../../wire/message.js";
import { fqdn, isSubdomain, joinName, lowerName, trimZone } from "../../wire/name.js";
import type { ClusterView } from "./cluster-view.js";
import type { KubernetesOptions } from "./options.js";
import { DNS_SCHEMA_VERSION } from "./options.js";
import { parseRequest } from "./request.js";
import { addressFromReverse, reverseTargets } from "./reverse.js";
import type { FindResult, Found } from "./services.js";
import { findRecords } from "./services.js";
import { soaRecord } from "./soa.js";

/** CNAME chains stop after this many links, as in CoreDNS. */
const MAX_CNAME_CHAIN = 10;

/** A CNAME whose target lies outside the plugin's zone: the handler resolves it through the server. */
export interface UpstreamNeed {
  cname: ResourceRecord;
  target: string;
  qtype: number;
}

/** The record-level result of one question, before the handler turns it into a reply. */
export type Lookup =
  | { kind: "records"; answer: ResourceRecord[]; extra: ResourceRecord[]; upstream: UpstreamNeed[] }
  | { kind: "nodata" }
  | { kind: "nxdomain" }
  | { kind: "refused" };

export interface LookupQuery {
  /** The query name as asked (its spelling is kept in owners). */
  qname: string;
  qtype: number;
  /** The matched plugin zone, spelled as in the query. */
  zone: string;
}

const T = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  IXFR: 251,
  AXFR: 252,
};

/** Answers one question from the cluster view, following CoreDNS's kubernetes plugin rule for rule. */
export function lookup(view: ClusterView, opts: KubernetesOptions, q: LookupQuery): Lookup {
  const ctx = new LookupContext(view, opts, q.zone);
  const qname = fqdn(q.qname);
  switch (q.qtype) {
    case T.A:
    case T.AAAA: {
      const r = ctx.addresses(qname, q.qtype, []);
      return r.nameError ? { kind: "nxdomain" } : toLookup(r.records, [], r.upstream);
    }
    case T.TXT:
      return ctx.txt(qname);
    case T.CNAME: {
      const r = ctx.services(qname, T.CNAME);
      if (r.nameError) return { kind: "nxdomain" };
      const first = r.found[0];
      if (!first || isIP(first.host)) return { kind: "nodata" };
      return toLookup([ctx.rr(qname, "CNAME", fqdn(first.host), first.ttl)], [], []);
    }
    case T.PTR:
      return ctx.ptr(qname);
    case T.SRV:
      return ctx.srv(qname);
    case T.SOA:
      return ctx.isApex(qname) ? toLookup([soaRecord(view, opts, q.zone)], [], []) : { kind: "nodata" };
    case T.AXFR:
    case T.IXFR:
      // Zone transfers belong to the transfer plugin.
      return { kind: "refused" };
    case T.NS:
      if (ctx.isApex(qname)) return ctx.ns(qname);
      return ctx.existsAs(qname);
    default:
      return ctx.existsAs(qname);
  }
}

function toLookup(answer: ResourceRecord[], extra: ResourceRecord[], upstream: UpstreamNeed[]): Lookup {
  return answer.length === 0 && upstream.length === 0
    ? { kind: "nodata" }
    : { kind: "records", answer, extra, upstream };
}

function isIP(host: string): boolean {
  return isIPv4(host) || isIPv6(host);
}

class LookupContext {
  private readonly zoneLower: string;

  constructor(
    private readonly view: ClusterView,
    private readonly opts: KubernetesOptions,
    private readonly zone: string,
  ) {
    this.zoneLower = lowerName(fqdn(zone));
  }

  isApex(name: string): boolean {
    return lowerName(name) === this.zoneLower;
  }

  rr<T extends "A" | "AAAA" | "CNAME" | "PTR" | "NS">(
    name: string,
    type: T,
    data: string,
    ttl: number,
  ): ResourceRecord {
    return { name, type, class: ClassIN, ttl, data } as ResourceRecord;
  }

  /** CoreDNS's Services(): what `name` stands for, with the special names handled. */
  services(name: string, qtype: number): FindResult {
    const lname = lowerName(name);
    const relative = trimZone(lname, this.zoneLower);
    if (relative === "ns.dns") {
      const family = qtype === T.A ? isIPv4 : qtype === T.AAAA ? isIPv6 : undefined;
      const found = this.opts.selfAddresses
        .filter((ip) => family?.(ip))
        .map((ip) => ({ host: ip, port: -1, ttl: this.opts.ttl, domain: name }));
      return { found, nameError: false };
    }
    const request = parseRequest(relative);
    if (!request) return { found: [], nameError: true };
    const result = findRecords(this.view, this.opts, request, this.zone);
    // Reverse names that parse (they rarely do) still name nothing here; PTR has its own path.
    if (!result.nameError && result.found.length > 0 && /\.(in-addr|ip6)\.arpa\.$/.test(lname)) {
      return { found: [], nameError: true };
    }
    if (qtype === T.SRV) return { ...result, found: result.found.filter((f) => isIP(f.host)) };
    return result;
  }

  /** A or AAAA for `name`, following in-zone CNAMEs; out-of-zone targets are left to the handler. */
  addresses(
    name: string,
    qtype: number,
    previous: ResourceRecord[],
  ): { records: ResourceRecord[]; upstream: UpstreamNeed[]; nameError: boolean } {
    // At the apex CoreDNS first tries `apex.dns.<zone>`, which never parses, then the apex itself.
    const found = this.services(name, qtype);
    if (found.nameError) return { records: [], upstream: [], nameError: true };
    const records: ResourceRecord[] = [];
    const upstream: UpstreamNeed[] = [];
    const seen = new Set<string>();
    for (const f of found.found) {
      if (!isIP(f.host)) {
        const target = fqdn(f.host);
        if (lowerName(target) === lowerName(name)) continue;
        const cname = this.rr(name, "CNAME", target, f.ttl);
        if (previous.length > MAX_CNAME_CHAIN) continue;
        if (previous.some((p) => p.type === "CNAME" && lowerName(p.data) === lowerName(target))) continue;
        if (isSubdomain(target, this.zone)) {
          const next = this.addresses(target, qtype, [...previous, cname]);
          if (!next.nameError && next.records.length > 0) records.push(cname, ...next.records);
          upstream.push(...next.upstream);
        } else {
          upstream.push({ cname, target, qtype });
        }
        continue;
      }
      const wanted = qtype === T.A ? isIPv4(f.host) : isIPv6(f.host);
      if (wanted && !seen.has(f.host)) {
        seen.add(f.host);
        records.push(this.rr(name, qtype === T.A ? "A" : "AAAA", f.host, f.ttl));
      }
    }
    return { records, upstream, nameError: false };
  }

  txt(name: string): Lookup {
    if (trimZone(lowerName(name), this.zoneLower) === "dns-version") {
      return toLookup(
        [{ name, type: "TXT", class: ClassIN, ttl: 28800, data: [Buffer.from(DNS_SCHEMA_VERSION)] }],
        [],
        [],
      );
    }
    // CoreDNS answers NODATA only when the name stands for something; even the apex gets NXDOMAIN.
    const r = this.services(name, T.TXT);
    return r.found.length > 0 ? { kind: "nodata" } : { kind: "nxdomain" };
  }

  ptr(name: string): Lookup {
    const ip = addressFromReverse(lowerName(name));
    if (ip === undefined) {
      const r = this.services(name, T.PTR);
      return r.nameError ? { kind: "nxdomain" } : { kind: "nodata" };
    }
    const targets = reverseTargets(this.view, this.opts, ip);
    if (targets.length === 0) return { kind: "nxdomain" };
    return toLookup(
      targets.map((t) => this.rr(name, "PTR", t, this.opts.ttl)),
      [],
      [],
    );
  }

  /**
   * SRV: priority 0, weight floor(100 / number of matches) (at least 1), one record per target and port,
   * glue per target and address. Port -1 entries (slices without ports) count towards the weight only.
   */
  srv(name: string): Lookup {
    const r = this.services(name, T.SRV);
    if (r.nameError) return { kind: "nxdomain" };
    const weight = Math.max(1, Math.floor(100 / Math.max(1, r.found.length)));
    const answer: ResourceRecord[] = [];
    const extra: ResourceRecord[] = [];
    const seen = new Set<string>();
    for (const f of r.found) {
      if (f.port === -1) continue;
      const target = f.domain;
      const srvKey = `${lowerName(target)} ${f.port}`;
      if (!seen.has(srvKey)) {
        seen.add(srvKey);
        answer.push({
          name,
          type: "SRV",
          class: ClassIN,
          ttl: f.ttl,
          data: { priority: 0, weight, port: f.port, target },
        });
      }
      const glueKey = `${lowerName(target)} ${f.host}`;
      if (!seen.has(glueKey)) {
        seen.add(glueKey);
        extra.push(this.rr(target, isIPv4(f.host) ? "A" : "AAAA", f.host, f.ttl));
      }
    }
    return toLookup(answer, extra, []);
  }

  ns(name: string): Lookup {
    const nsName = joinName("ns.dns", this.zone);
    const extra = this.opts.selfAddresses.map((ip) =>
      this.rr(nsName, isIPv4(ip) ? "A" : "AAAA", ip, this.opts.ttl),
    );
    return toLookup([this.rr(name, "NS", nsName, this.opts.ttl)], extra, []);
  }

  /** For types the plugin has no records of: NODATA if the name exists (an A lookup succeeds), else NXDOMAIN. */
  existsAs(name: string): Lookup {
    return this.addresses(name, T.A, []).nameError ? { kind: "nxdomain" } : { kind: "nodata" };
  }
}

export type { Found };

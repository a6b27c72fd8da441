import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { RestClient } from "../rest/client.js";
import { leases } from "../rest/resources.js";

/** What the elector reads and writes; the spec of a Lease, in plain fields. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** MicroTime strings. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** The Lease a candidate last read, with the version to update against. */
export interface ObservedLease {
  record: LeaderElectionRecord;
  lease: Lease;
}

/** A coordination.k8s.io/v1 Lease used as the lock. Writes are compare-and-swap on resourceVersion. */
export class LeaseLock {
  constructor(
    readonly client: RestClient,
    readonly namespace: string,
    readonly name: string,
  ) {}

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The current lease; rejects with a 404 ApiError when it does not exist. `signal` ends the request. */
  async get(signal?: AbortSignal): Promise<ObservedLease> {
    const lease = await this.client.get(leases, this.name, { namespace: this.namespace, signal });
    return { lease, record: recordOf(lease) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<ObservedLease> {
    const lease = await this.client.create(
      leases,
      { metadata: { name: this.name, namespace: this.namespace }, spec: specOf(record) },
      { signal },
    );
    return { lease, record: recordOf(lease) };
  }

  /** Replaces the spec of `previous`; a 409 means someone else wrote first. */
  async update(previous: Lease, record: LeaderElectionRecord, signal?: AbortSignal): Promise<ObservedLease> {
    const lease = await this.client.update(leases, { ...previous, spec: specOf(record) }, { signal });
    return { lease, record: recordOf(lease) };
  }
}

function specOf(record: LeaderElectionRecord): Lease["spec"] {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime,
    renewTime: record.renewTime,
    leaseTransitions: record.leaseTransitions,
  };
}

function recordOf(lease: Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime ?? "",
    renewTime: spec.renewTime ?? "",
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

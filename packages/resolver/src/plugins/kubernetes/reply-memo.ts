import { ownedCopy } from "../../wire/encode.js";

/**
 * Encoded replies of the kubernetes plugin, kept until the cluster view changes. An answer depends only on
 * the question (its exact spelling: owner names repeat it byte for byte) and the view, so while the view's
 * generation stands, the same question gets the same bytes, apart from the ID and the RD/CD bits copied
 * from the query. Replies that went through the upstream are never kept.
 */
export class ReplyMemo {
  private readonly replies = new Map<string, Buffer>();
  private generation = Number.NaN;

  constructor(private readonly capacity = 10000) {}

  /** The reply kept for `key` under `generation`; a new generation forgets everything kept before. */
  get(key: string, generation: number): Buffer | undefined {
    if (generation !== this.generation) {
      this.replies.clear();
      this.generation = generation;
      return undefined;
    }
    return this.replies.get(key);
  }

  set(key: string, generation: number, wire: Buffer): void {
    if (generation !== this.generation) {
      this.replies.clear();
      this.generation = generation;
    }
    // Many distinct names (a scan of random names) start over rather than grow without bound.
    if (this.replies.size >= this.capacity) this.replies.clear();
    // A copy in memory of its own: a pool slice would keep its whole slab alive as long as the reply is kept.
    this.replies.set(key, ownedCopy(wire));
  }
}

/** The memo key: the question name's wire bytes as sent (case kept), and the type. */
export function memoKey(nameWire: string, qtype: number): string {
  return `${qtype}/${nameWire}`;
}

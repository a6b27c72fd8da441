import type {
  Handler,
  QueryContext,
  ResponseWriter,
  Result,
  WireAnswerContext,
  WireRelay,
} from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import type { Upstream } from "../../plugin/pkg/upstream.js";
import type { Readiness } from "../../plugin/setup.js";
import { matchZone } from "../../plugin/zones.js";
import { encodeMessage } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import { nameToLabels } from "../../wire/name.js";
import type { PeekedQuery } from "../../wire/peek.js";
import { answer } from "./answer.js";
import type { ClusterView } from "./cluster-view.js";
import type { KubernetesOptions } from "./options.js";
import { memoKey, ReplyMemo } from "./reply-memo.js";

/** The kubernetes plugin in the chain: a thin shell over answer(). */
export class KubernetesHandler implements Handler, Readiness {
  readonly name = "kubernetes";
  private readonly memo = new ReplyMemo();

  constructor(
    private readonly view: ClusterView,
    readonly options: KubernetesOptions,
    private readonly next: Handler | undefined,
    private readonly upstream?: Upstream,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const generation = this.memoGeneration();
    const out = await answer(this.view, this.options, r, this.upstream);
    if (out.action === "next") return nextOrFailure(this.name, this.next, ctx, w, r);
    if (out.action === "rcode") return { rcode: out.rcode };
    const wire = encodeOrUndefined(out.reply);
    const q = r.question[0];
    const keep = out.pure && q && r.opcode === 0 && generation !== undefined;
    if (wire && keep && generation === this.memoGeneration())
      this.memo.set(memoKey(nameWire(q.name), q.type), generation, wire);
    w.write(out.reply, wire);
    // Written replies report success whatever their rcode, per the chain contract.
    return { rcode: 0 };
  }

  /** A question answered before under the same cluster view: its bytes again, with this query's ID and RD/CD. */
  answerFromWire(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined {
    const generation = this.memoGeneration();
    if (generation === undefined) return undefined;
    const kept = this.memo.get(memoKey(q.packet.toString("latin1", 12, q.nameEnd), q.qtype), generation);
    if (!kept || kept.length + ctx.reserve > ctx.limit) return undefined;
    const reply = Buffer.allocUnsafe(kept.length + ctx.reserve);
    kept.copy(reply, 0);
    reply.writeUInt16BE(q.id, 0);
    reply.writeUInt16BE((kept.readUInt16BE(2) & ~0x0110) | (q.flags & 0x0110), 2);
    return reply;
  }

  /** A name outside the plugin's zones goes on unchanged, as `serveDNS` passes it on. */
  relayFromWire(q: PeekedQuery, ctx: WireAnswerContext): Promise<WireRelay> | undefined {
    if (matchZone(q.name, this.options.zones) !== undefined) return undefined;
    return this.next?.relayFromWire?.(q, ctx);
  }

  /** Undefined while replies may not be kept: a view that cannot tell its changes, or one not synced. */
  private memoGeneration(): number | undefined {
    if (!this.view.generation || !this.view.hasSynced()) return undefined;
    return this.view.generation();
  }

  /** Ready once the informers have synced. */
  ready(): boolean {
    return this.view.hasSynced();
  }

  notReadyReasons(): string[] {
    return this.view.notSyncedReasons?.() ?? [];
  }
}

/** A presentation name as its wire labels, one byte per character (the form memo keys use). */
function nameWire(name: string): string {
  let out = "";
  for (const label of nameToLabels(name)) out += String.fromCharCode(label.length) + label.toString("latin1");
  return `${out}\u0000`;
}

/** A reply that cannot be encoded is left to the server, which answers SERVFAIL for it. */
function encodeOrUndefined(reply: Message): Buffer | undefined {
  try {
    return encodeMessage(reply);
  } catch {
    return undefined;
  }
}

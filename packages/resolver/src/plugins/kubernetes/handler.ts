import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import type { Readiness } from "../../plugin/setup.js";
import type { Message } from "../../wire/message.js";
import type { Upstream } from "./answer.js";
import { answer } from "./answer.js";
import type { ClusterView } from "./cluster-view.js";
import type { KubernetesOptions } from "./options.js";

/** The kubernetes plugin in the chain: a thin shell over answer(). */
export class KubernetesHandler implements Handler, Readiness {
  readonly name = "kubernetes";

  constructor(
    private readonly view: ClusterView,
    readonly options: KubernetesOptions,
    private readonly next: Handler | undefined,
    private readonly upstream?: Upstream,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const out = await answer(this.view, this.options, r, this.upstream);
    if (out.action === "next") return nextOrFailure(this.name, this.next, ctx, w, r);
    if (out.action === "rcode") return { rcode: out.rcode };
    w.write(out.reply);
    // Written replies report success whatever their rcode, per the chain contract.
    return { rcode: 0 };
  }

  /** Ready once the informers have synced. */
  ready(): boolean {
    return this.view.hasSynced();
  }
}

import type { Handler, Result } from "../../src/plugin/handler.js";
import { typeName } from "../../src/wire/constants.js";
import type { Message, ResourceRecord } from "../../src/wire/message.js";
import { replyTo } from "../../src/wire/message.js";
import { lowerName } from "../../src/wire/name.js";
import { parseRecord } from "../../src/wire/presentation.js";

/** A handler answering from zone-file lines: matching owner and type, else NXDOMAIN. Tests only. */
export function staticZone(lines: string[], name = "static"): Handler & { seen: Message[] } {
  const records: ResourceRecord[] = lines.map(parseRecord);
  const seen: Message[] = [];
  return {
    name,
    seen,
    async serveDNS(_ctx, w, r): Promise<Result> {
      seen.push(r);
      const q = r.question[0];
      const reply = replyTo(r);
      reply.aa = true;
      if (!q) return { rcode: 2 };
      const owned = records.filter((rr) => lowerName(rr.name) === lowerName(q.name));
      reply.answer = owned
        .filter((rr) => rr.type === typeName(q.type))
        .map((rr) => ({ ...rr, name: q.name }));
      if (owned.length === 0) reply.rcode = 3;
      w.write(reply);
      return { rcode: reply.rcode };
    },
  };
}

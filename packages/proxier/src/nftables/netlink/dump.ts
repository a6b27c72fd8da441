// Dump requests for one table's chains, sets, rules, elements and objects, and the reading of
// their answers. The applier lists a table's chains and sets at start-up with these; the tests
// compare whole tables with them.
import * as C from "./constants.js";
import { attr, attrString, isDone, isError, type NetlinkMessage, parseAttributes } from "./reader.js";
import { familyNumber, NetlinkWriter } from "./writer.js";

export type DumpKind = "table" | "chain" | "rule" | "set" | "element" | "object";

const GET: Readonly<Record<DumpKind, number>> = {
  table: C.MSG.GETTABLE,
  chain: C.MSG.GETCHAIN,
  rule: C.MSG.GETRULE,
  set: C.MSG.GETSET,
  element: C.MSG.GETSETELEM,
  object: C.MSG.GETOBJ,
};

/**
 * A dump request of one kind within table `table` of `family`; `set` names the set whose
 * elements an element dump lists. Tables are dumped per family and filtered by the reader.
 */
export function dumpRequest(
  kind: DumpKind,
  family: "ip" | "ip6" | "inet",
  table: string,
  seq: number,
  set?: string,
): Buffer {
  const w = new NetlinkWriter(256);
  w.begin((C.NFNL_SUBSYS_NFTABLES << 8) | GET[kind], C.NLM_F_DUMP | C.NLM_F_ACK, seq, familyNumber(family));
  if (kind === "element") {
    w.str(C.ELEM_LIST.TABLE, table);
    w.str(C.ELEM_LIST.SET, set ?? "");
  } else if (kind !== "table") {
    // The first attribute of chains, rules, sets and objects is their table.
    w.str(1, table);
  }
  w.end();
  return Buffer.from(w.finish());
}

/** Where a dump stands after reading some of its messages. */
export interface DumpProgress {
  readonly objects: NetlinkMessage[];
  done: boolean;
  /** A positive errno when the kernel refused the dump (ENOENT: no such table or set). */
  errno: number;
}

export function newDumpProgress(): DumpProgress {
  return { objects: [], done: false, errno: 0 };
}

/** Adds one datagram of a dump's answer; objects of other tables are left out (not every dump filters). */
export function readDumpDatagram(
  progress: DumpProgress,
  messages: readonly NetlinkMessage[],
  table?: string,
): void {
  for (const m of messages) {
    if (isDone(m)) {
      progress.done = true;
    } else if (isError(m)) {
      const code = -m.payload.readInt32LE(0);
      if (code !== 0) progress.errno = code;
      progress.done = true;
    } else if (table === undefined || tableOf(m) === table) {
      progress.objects.push(m);
    }
  }
}

/** The table a dumped object belongs to: attribute 1 of every kind but tables, whose name it is. */
function tableOf(m: NetlinkMessage): string | undefined {
  return attrString(attr(parseAttributes(m.payload, 4), 1));
}

/** The name attribute of a dumped chain, set or object (attribute 2 of sets and objects, 3 of chains). */
export function objectName(kind: "chain" | "set" | "object", m: NetlinkMessage): string {
  const attrs = parseAttributes(m.payload, 4);
  return attrString(attr(attrs, kind === "chain" ? C.CHAIN.NAME : C.SET.NAME)) ?? "";
}

/** Whether a dumped set is a named set, not a map nor one nft prints inline (anonymous). */
export function isNamedSet(m: NetlinkMessage): boolean {
  const flags = attr(parseAttributes(m.payload, 4), C.SET.FLAGS);
  return flags === undefined || (flags.value.readUInt32BE(0) & (C.SET_FLAG.ANONYMOUS | C.SET_FLAG.MAP)) === 0;
}

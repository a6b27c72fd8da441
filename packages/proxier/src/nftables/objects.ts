// The nftables objects a transaction can carry, as plain data, and their `nft -f` text.

export type NFTFamily = "ip" | "ip6" | "inet";

export interface TableObject {
  readonly kind: "table";
  readonly comment?: string;
}

export interface ChainObject {
  readonly kind: "chain";
  readonly name: string;
  /** Base chains only: all three of type, hook and priority. */
  readonly type?: "filter" | "nat" | "route";
  readonly hook?: "prerouting" | "input" | "forward" | "output" | "postrouting";
  readonly priority?: number;
  readonly comment?: string;
}

export interface RuleObject {
  readonly kind: "rule";
  readonly chain: string;
  readonly rule: string;
  readonly comment?: string;
}

export interface SetObject {
  readonly kind: "set";
  readonly name: string;
  readonly type?: string;
  readonly flags?: readonly string[];
  /** Seconds. */
  readonly timeout?: number;
  readonly comment?: string;
}

export interface MapObject {
  readonly kind: "map";
  readonly name: string;
  readonly type?: string;
  readonly comment?: string;
}

export interface ElementObject {
  readonly kind: "element";
  /** Exactly one of set and map. */
  readonly set?: string;
  readonly map?: string;
  readonly key: readonly string[];
  readonly value?: readonly string[];
  readonly comment?: string;
}

/** A named counter; we only ever remove the ones an optional kube-proxy feature leaves behind. */
export interface CounterObject {
  readonly kind: "counter";
  readonly name: string;
  readonly comment?: string;
}

export type NFTObject =
  | TableObject
  | ChainObject
  | RuleObject
  | SetObject
  | MapObject
  | ElementObject
  | CounterObject;

export type Verb = "add" | "create" | "insert" | "flush" | "delete" | "destroy";

export interface Operation {
  readonly verb: Verb;
  readonly object: NFTObject;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

function props(parts: Array<string | undefined>): string {
  const present = parts.filter((p): p is string => p !== undefined);
  return present.length === 0 ? "" : ` { ${present.map((p) => `${p} ;`).join(" ")} }`;
}

/** Whether the verb writes the object's properties or only its name. */
function withProperties(verb: Verb): boolean {
  return verb === "add" || verb === "create" || verb === "insert";
}

/** One line of an `nft -f` script for `verb object` in table `family name`. */
export function renderOperation(op: Operation, family: NFTFamily, table: string): string {
  const { verb, object: o } = op;
  const where = `${family} ${table}`;
  const full = withProperties(verb);
  switch (o.kind) {
    case "table":
      return `${verb} table ${where}${full ? props([o.comment === undefined ? undefined : `comment ${quote(o.comment)}`]) : ""}`;
    case "chain": {
      const base = o.type === undefined ? undefined : `type ${o.type} hook ${o.hook} priority ${o.priority}`;
      const comment = o.comment === undefined ? undefined : `comment ${quote(o.comment)}`;
      return `${verb} chain ${where} ${o.name}${full ? props([base, comment]) : ""}`;
    }
    case "rule": {
      const comment = o.comment === undefined ? "" : ` comment ${quote(o.comment)}`;
      return `${verb} rule ${where} ${o.chain} ${o.rule}${comment}`;
    }
    case "counter":
      return `${verb} counter ${where} ${o.name}${full ? props([o.comment === undefined ? undefined : `comment ${quote(o.comment)}`]) : ""}`;
    case "set":
    case "map": {
      if (!full) return `${verb} ${o.kind} ${where} ${o.name}`;
      const set = o.kind === "set" ? o : undefined;
      return `${verb} ${o.kind} ${where} ${o.name}${props([
        o.type === undefined ? undefined : `type ${o.type}`,
        set?.flags?.length ? `flags ${set.flags.join(",")}` : undefined,
        set?.timeout === undefined ? undefined : `timeout ${set.timeout}s`,
        o.comment === undefined ? undefined : `comment ${quote(o.comment)}`,
      ])}`;
    }
    case "element":
      return `${verb} element ${where} ${o.set ?? o.map ?? ""} { ${elementBody(o, full)} }`;
  }
}

/** What goes between the braces for one element: `key [comment "..."] [: value]`. */
export function elementBody(o: ElementObject, withProps = true): string {
  let body = o.key.join(" . ");
  if (withProps && o.comment !== undefined) body += ` comment ${quote(o.comment)}`;
  if (withProps && o.value !== undefined) body += ` : ${o.value.join(" . ")}`;
  return body;
}

/** The object's identity within its kind (chain name, "chain: rule", "set key"...). */
export function objectName(o: NFTObject): string {
  switch (o.kind) {
    case "table":
      return "";
    case "rule":
      return o.chain;
    case "element":
      return `${o.set ?? o.map ?? ""} ${o.key.join(" . ")}`;
    default:
      return o.name;
  }
}

/**
 * Whose command-line rules a flag set follows: "pflag" is spf13/pflag's, as kube-proxy and kube-controller-manager
 * use it (any argument that is not a flag is refused); "go" is Go's own flag package, as CoreDNS uses it (the
 * flags end at "--" or at the first argument that is not one, and messages name flags with one dash).
 */
export type Dialect = "pflag" | "go";

/** An integer kind: the range it takes, and how it is written. */
export interface IntKind {
  readonly min: number;
  readonly max: number;
  /**
   * Plain decimal digits (a "-" only when min is negative), for apps that have always read ints that way;
   * otherwise strconv.ParseInt with base 0, as pflag's int flags read them.
   */
  readonly decimal?: boolean;
}

/** A value read by the app's own rule. */
export interface CustomKind {
  /** The type help text names, as the upstream binary shows it. */
  readonly type: string;
  /** The value, or undefined when refused. */
  readonly read: (raw: string) => unknown;
  /** Why a refused value is refused. */
  readonly invalid: string;
}

/**
 * How a flag's value is read: "list" is comma-separated (spaces around items trimmed), "bool-map" pflag's
 * mapStringBool (key=bool,...), "duration" a Go duration in milliseconds, "ip" an IPv4 or IPv6 address.
 */
export type Kind =
  | "string"
  | "bool"
  | "duration"
  | "float"
  | "ip"
  | "list"
  | "bool-map"
  | IntKind
  | CustomKind;

interface FlagBase {
  readonly name: string;
  readonly kind: Kind;
  readonly help: string;
  /** Why a value the kind cannot read is refused, when not in the kind's usual words. */
  readonly invalid?: string;
  /**
   * The value a non-bool flag takes when given without one (pflag's NoOptDefVal), so it can be given bare as a
   * bool; bools always take "true".
   */
  readonly bare?: string;
  /**
   * A one-letter second name taken with one dash (pflag's shorthand, as cobra gives `--help` its `-h`); the
   * pflag dialect only, where `--h` stays unknown as it is there.
   */
  readonly shorthand?: string;
}

/** A flag whose value lands in field K of the app's flag record. */
export type FieldFlag<T, K extends keyof T> = FlagBase & {
  readonly field: K;
  /** A check of the value read, beyond its kind: why it is refused, or undefined. */
  readonly check?: (value: Exclude<T[K], undefined>) => string | undefined;
};

/** A flag accepted for compatibility: its value is checked, it is named in `given`, and nothing is stored. */
export type UnstoredFlag = FlagBase & {
  readonly field?: undefined;
  readonly check?: (value: never) => string | undefined;
};

/** One flag, declared once: its name, how its value is read, its help, and the field it fills. */
export type FlagSpec<T> = { [K in keyof T]-?: FieldFlag<T, K> }[keyof T] | UnstoredFlag;

/** An app's flags and the rules it reads them by. */
export interface FlagSet<T> {
  readonly dialect: Dialect;
  readonly flags: readonly FlagSpec<T>[];
  /** The record before any flag is applied; fields absent here stay absent unless given. */
  readonly defaults: T;
  /** Booleans only as true, false, 1 or 0, where strconv.ParseBool also takes t, F, TRUE and the like. */
  readonly plainBools?: boolean;
  /** Reads "_" in a name as "-", as pflag's WordSepNormalizeFunc (which kube-proxy installs). */
  readonly underscoreAsDash?: boolean;
}

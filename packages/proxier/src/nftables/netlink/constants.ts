// The numbers of the nf_tables netlink protocol (linux/netfilter/nf_tables.h, nfnetlink.h) that the
// writer and the dump reader use. Only what they send or read is here.

export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;

export const NLM_F_REQUEST = 0x1;
export const NLM_F_MULTI = 0x2;
export const NLM_F_ACK = 0x4;
export const NLM_F_DUMP = 0x300;
export const NLM_F_REPLACE = 0x100;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const NLM_F_APPEND = 0x800;

/** Set on a nested attribute's type, as libmnl's mnl_attr_nest_start does. */
export const NLA_F_NESTED = 0x8000;

export const NFNL_SUBSYS_NFTABLES = 10;
export const NFNL_MSG_BATCH_BEGIN = 0x10;
export const NFNL_MSG_BATCH_END = 0x11;

export const AF_INET = 2;
export const AF_INET6 = 10;

export const MSG = {
  NEWTABLE: 0,
  GETTABLE: 1,
  DELTABLE: 2,
  NEWCHAIN: 3,
  GETCHAIN: 4,
  DELCHAIN: 5,
  NEWRULE: 6,
  GETRULE: 7,
  DELRULE: 8,
  NEWSET: 9,
  GETSET: 10,
  DELSET: 11,
  NEWSETELEM: 12,
  GETSETELEM: 13,
  DELSETELEM: 14,
  GETGEN: 16,
  NEWOBJ: 18,
  GETOBJ: 19,
  DELOBJ: 20,
  DESTROYTABLE: 26,
  DESTROYCHAIN: 27,
  DESTROYSET: 29,
  DESTROYSETELEM: 30,
  DESTROYOBJ: 31,
} as const;

export const TABLE = { NAME: 1, FLAGS: 2, USE: 3, HANDLE: 4, USERDATA: 6 } as const;
export const CHAIN = {
  TABLE: 1,
  HANDLE: 2,
  NAME: 3,
  HOOK: 4,
  POLICY: 5,
  USE: 6,
  TYPE: 7,
  FLAGS: 10,
  ID: 11,
  USERDATA: 12,
} as const;
export const HOOK = { HOOKNUM: 1, PRIORITY: 2 } as const;
export const RULE = { TABLE: 1, CHAIN: 2, HANDLE: 3, EXPRESSIONS: 4, POSITION: 6, USERDATA: 7 } as const;
export const LIST_ELEM = 1;
export const EXPR = { NAME: 1, DATA: 2 } as const;
export const SET = {
  TABLE: 1,
  NAME: 2,
  FLAGS: 3,
  KEY_TYPE: 4,
  KEY_LEN: 5,
  DATA_TYPE: 6,
  DATA_LEN: 7,
  POLICY: 8,
  DESC: 9,
  ID: 10,
  TIMEOUT: 11,
  GC_INTERVAL: 12,
  USERDATA: 13,
  HANDLE: 16,
} as const;
export const SET_DESC = { SIZE: 1, CONCAT: 2 } as const;
export const SET_FIELD_LEN = 1;
export const SET_FLAG = {
  ANONYMOUS: 0x1,
  CONSTANT: 0x2,
  INTERVAL: 0x4,
  MAP: 0x8,
  TIMEOUT: 0x10,
  EVAL: 0x20,
} as const;
export const ELEM_LIST = { TABLE: 1, SET: 2, ELEMENTS: 3, SET_ID: 4 } as const;
export const ELEM = { KEY: 1, DATA: 2, FLAGS: 3, USERDATA: 6 } as const;
export const ELEM_INTERVAL_END = 1;
export const DATA = { VALUE: 1, VERDICT: 2 } as const;
export const VERDICT = { CODE: 1, CHAIN: 2 } as const;
/** Verdict codes; negative ones are nf_tables' own. */
export const VERDICT_CODE = { DROP: 0, ACCEPT: 1, JUMP: -3, GOTO: -4 } as const;
/** The data type of a verdict map's values. */
export const NFT_DATA_VERDICT = 0xffffff00;
export const OBJ = { TABLE: 1, NAME: 2, TYPE: 3, DATA: 4 } as const;
export const OBJECT_COUNTER = 1;
export const COUNTER = { BYTES: 1, PACKETS: 2 } as const;

/** Netfilter hook numbers of the ip/ip6 families. */
export const HOOKNUM = { prerouting: 0, input: 1, forward: 2, output: 3, postrouting: 4 } as const;

// Expressions
export const PAYLOAD = { DREG: 1, BASE: 2, OFFSET: 3, LEN: 4 } as const;
export const PAYLOAD_BASE = { NETWORK: 1, TRANSPORT: 2 } as const;
export const META = { DREG: 1, KEY: 2, SREG: 3 } as const;
export const META_KEY = { MARK: 3, IIFNAME: 6, L4PROTO: 16 } as const;
export const CMP = { SREG: 1, OP: 2, DATA: 3 } as const;
export const CMP_OP = { EQ: 0, NEQ: 1 } as const;
export const BITWISE = { SREG: 1, DREG: 2, LEN: 3, MASK: 4, XOR: 5 } as const;
export const LOOKUP = { SET: 1, SREG: 2, DREG: 3, SET_ID: 4, FLAGS: 5 } as const;
export const LOOKUP_F_INV = 1;
export const CT = { DREG: 1, KEY: 2 } as const;
export const CT_KEY = { STATE: 0, STATUS: 2 } as const;
export const FIB = { DREG: 1, RESULT: 2, FLAGS: 3 } as const;
export const FIB_RESULT_ADDRTYPE = 3;
export const FIB_FLAG = { SADDR: 1, DADDR: 2 } as const;
export const IMMEDIATE = { DREG: 1, DATA: 2 } as const;
export const NAT = { TYPE: 1, FAMILY: 2, REG_ADDR_MIN: 3, REG_PROTO_MIN: 5, FLAGS: 7 } as const;
export const NAT_DNAT = 1;
export const NAT_RANGE_PROTO_SPECIFIED = 0x2;
export const MASQ = { FLAGS: 1 } as const;
export const NAT_RANGE_PROTO_RANDOM_FULLY = 0x10;
export const REJECT = { TYPE: 1, ICMP_CODE: 2 } as const;
export const REJECT_ICMP_UNREACH = 0;
/** ICMP port unreachable, the code of a plain `reject` (ICMPv6's is 4). */
export const ICMP_PORT_UNREACH = 3;
export const ICMPV6_PORT_UNREACH = 4;
export const NUMGEN = { DREG: 1, MODULUS: 2, TYPE: 3, OFFSET: 4 } as const;
export const NUMGEN_RANDOM = 1;
export const DYNSET = { SET_NAME: 1, SET_ID: 2, OP: 3, SREG_KEY: 4 } as const;
export const DYNSET_OP_UPDATE = 1;

export const REG_VERDICT = 0;
export const REG_1 = 1;
export const REG32_00 = 8;

/** RTN_LOCAL, `fib ... type local`. */
export const RTN_LOCAL = 2;
/** Conntrack state bit of `ct state new`, status bit of `ct status dnat`. */
export const CT_STATE_NEW = 0x8;
export const CT_STATUS_DNAT = 0x20;

/** nft's datatype ids (src/datatype.h), which set key and data types are given in. */
export const TYPE = {
  VERDICT: 1,
  INTEGER: 4,
  IPADDR: 7,
  IP6ADDR: 8,
  INET_PROTOCOL: 12,
  INET_SERVICE: 13,
} as const;
/** Bits per datatype id in a concatenation's type. */
export const TYPE_BITS = 6;

/** libnftnl's user data TLV types. */
export const UDATA = {
  COMMENT: 0,
  SET_KEYBYTEORDER: 0,
  SET_DATABYTEORDER: 1,
  SET_MERGE_ELEMENTS: 2,
  SET_COMMENT: 7,
} as const;
/** nft's byteorder enum, as stored in a set's user data. */
export const BYTEORDER = { HOST: 1, BIG: 2 } as const;

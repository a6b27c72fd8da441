/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel's conntrack, as tc and XDP programs reach it: kfuncs (unstable, in vmlinux BTF since 6.0; the NAT one since
 * 6.1). libbpf resolves each extern against the running kernel's BTF and checks that the prototypes agree, so the
 * types below carry the kernel's names. nf_conn keeps only the fields read here, found by name at load time
 * (CO-RE): its layout differs from kernel to kernel.
 */
#ifndef SWITCHYARD_TC_KFUNCS_H
#define SWITCHYARD_TC_KFUNCS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct ip_ct_tcp {
	__u8 state;
} __attribute__((preserve_access_index));

union nf_conntrack_proto {
	struct ip_ct_tcp tcp;
} __attribute__((preserve_access_index));

struct nf_conn {
	union nf_conntrack_proto proto;
} __attribute__((preserve_access_index));

/* An entry allocated by the program and not yet inserted: only the *_set_* kfuncs and insertion take it. */
struct nf_conn___init {
	struct nf_conn ct;
};

/* The kernel's struct bpf_ct_opts (16 bytes since 6.8; the 12-byte form without zones is accepted too). */
struct bpf_ct_opts {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u16 ct_zone_id;
	__u8 ct_zone_dir;
	__u8 reserved[3];
};

union nf_inet_addr {
	__u32 all[4];
	__be32 ip;
	__be32 ip6[4];
};

enum nf_nat_manip_type {
	NF_NAT_MANIP_SRC = 0,
	NF_NAT_MANIP_DST = 1,
};

/* netns_id for the namespace of the device the packet is on. */
#define CT_CURRENT_NETNS (-1)

/* enum tcp_conntrack: the states from which a SYN reopens the connection (conntrack kills the entry). */
#define TCP_CONNTRACK_TIME_WAIT 7
#define TCP_CONNTRACK_CLOSE 8

extern struct nf_conn *bpf_skb_ct_lookup(struct __sk_buff *skb, struct bpf_sock_tuple *tuple, __u32 tuple_size,
					 struct bpf_ct_opts *opts, __u32 opts_size) __ksym;
extern struct nf_conn___init *bpf_skb_ct_alloc(struct __sk_buff *skb, struct bpf_sock_tuple *tuple,
					       __u32 tuple_size, struct bpf_ct_opts *opts, __u32 opts_size) __ksym;
extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *xdp_ctx, struct bpf_sock_tuple *tuple, __u32 tuple_size,
					 struct bpf_ct_opts *opts, __u32 opts_size) __ksym;
extern struct nf_conn___init *bpf_xdp_ct_alloc(struct xdp_md *xdp_ctx, struct bpf_sock_tuple *tuple,
					       __u32 tuple_size, struct bpf_ct_opts *opts, __u32 opts_size) __ksym;
extern struct nf_conn *bpf_ct_insert_entry(struct nf_conn___init *ct) __ksym;
extern int bpf_ct_set_nat_info(struct nf_conn___init *ct, union nf_inet_addr *address, int port,
			       enum nf_nat_manip_type manip) __ksym;
extern void bpf_ct_set_timeout(struct nf_conn___init *ct, __u32 timeout_ms) __ksym;
extern int bpf_ct_change_timeout(struct nf_conn *ct, __u32 timeout_ms) __ksym;
extern void bpf_ct_release(struct nf_conn *ct) __ksym;

#endif

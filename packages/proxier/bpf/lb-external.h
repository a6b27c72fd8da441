/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The balancing of traffic from outside the node, both families, for the hook that includes it: tc.c (tc
 * ingress) and xdp.c (XDP, ahead of it on the same devices). Each defines first what differs between the hooks:
 *   LB_CTX                          the program's context type (struct __sk_buff, struct xdp_md)
 *   lb_load_bytes                   the helper that copies packet bytes out
 *   lb_ct_lookup, lb_ct_alloc       the conntrack kfuncs taking that context
 *   LB_PASS, LB_DROP                its verdicts: on to the stack untouched, dropped
 *   lb4_reject, lb6_reject          what a REJECT frontend's packet gets
 * and gets lb4_ingress and lb6_ingress, the one copy of the lookup, the backend's choice and the conntrack entry.
 */
#ifndef SWITCHYARD_LB_EXTERNAL_H
#define SWITCHYARD_LB_EXTERNAL_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "switchyard_maps.h"
#include "tc-kfuncs.h"
#include "tc-packet.h"

#define NSEC_PER_SEC 1000000000ULL

/*
 * ClientIP affinity's client: its address, folded into 63 bits, with the top bit set so that it never meets a
 * socket program's client (a network namespace cookie, a counter far below 2^63) in the shared affinity map.
 */
#define CLIENT_ADDRESS_ID (1ULL << 63)

static __always_inline __u64 lb4_client_id(const __be32 *address)
{
	return CLIENT_ADDRESS_ID | bpf_ntohl(address[0]);
}

static __always_inline __u64 lb6_client_id(const __be32 *address)
{
	__u64 high = bpf_ntohl(address[0] ^ address[1]);
	__u64 low = bpf_ntohl(address[2] ^ address[3]);

	return CLIENT_ADDRESS_ID | (high << 32) | low;
}

static __always_inline void lb4_fill_tuple(const struct flow *flow, struct bpf_sock_tuple *tuple)
{
	tuple->ipv4.saddr = flow->saddr[0];
	tuple->ipv4.daddr = flow->daddr[0];
	tuple->ipv4.sport = flow->sport;
	tuple->ipv4.dport = flow->dport;
}

static __always_inline void lb6_fill_tuple(const struct flow *flow, struct bpf_sock_tuple *tuple)
{
	__builtin_memcpy(tuple->ipv6.saddr, flow->saddr, sizeof(tuple->ipv6.saddr));
	__builtin_memcpy(tuple->ipv6.daddr, flow->daddr, sizeof(tuple->ipv6.daddr));
	tuple->ipv6.sport = flow->sport;
	tuple->ipv6.dport = flow->dport;
}

#define lb4_tuple_size sizeof(((struct bpf_sock_tuple *)0)->ipv4)
#define lb6_tuple_size sizeof(((struct bpf_sock_tuple *)0)->ipv6)

#define LB(name) LB_NAME(lb4, name)
#include "tc-lb.h"
#undef LB

#define LB(name) LB_NAME(lb6, name)
#include "tc-lb.h"
#undef LB

#endif

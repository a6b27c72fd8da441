/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Switchyard's balancing of traffic from outside the node: a tc (sched_cls) program on the node's external
 * devices' ingress, attached through tcx links. A packet to a NodePort, external IP, load-balancer or ClusterIP
 * frontend (the services map's SCOPE_EXTERNAL entries) is handed to a backend by a conntrack entry the program
 * inserts with NAT information (tc-lb.h); REJECT and DROP frontends are answered here (tc-reject.h); anything
 * else passes untouched. The kernel's NAT needs its hooks in the namespace: the loader (bpf-tc.ts) keeps an
 * nftables nat chain there for that.
 *
 * Why the kernel's conntrack rather than conntrack and NAT maps of the program's own (Cilium's way; tc-ownct.c
 * keeps a prototype of it, test/kernel/ebpf-tc-measure.ts compares them): measured on veth pairs, own maps took
 * some 5-10% more new connections a second, a few microseconds less to the SYN/ACK and 5-10% less CPU per
 * connection, and were no faster on an established stream; the kernel's conntrack gives, for that, the reverse path
 * whatever device replies come through (local backends need no program on their side), port clashes resolved,
 * TCP state and timeouts, ICMP errors and fragments translated, and flows that `conntrack -L` lists and the
 * proxier's conntrack cleanup deletes as in its other modes. Its cost: conntrack on for every flow of the node.
 *
 * The conntrack kfuncs are GPL-only, hence this object's license; the socket programs' object keeps its own.
 *
 * Build: bpf/build.mjs (clang -target bpf), with the headers bpf/gen-layout.mjs writes from layout.ts.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "switchyard_maps.h"
#include "tc-kfuncs.h"
#include "tc-packet.h"
#include "tc-reject.h"

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

#define LB_PASTE(prefix, name) prefix##_##name
#define LB_NAME(prefix, name) LB_PASTE(prefix, name)

#define LB(name) LB_NAME(lb4, name)
#include "tc-lb.h"
#undef LB

#define LB(name) LB_NAME(lb6, name)
#include "tc-lb.h"
#undef LB

SEC("tc")
int tc_ingress(struct __sk_buff *skb)
{
	if (skb->protocol == bpf_htons(ETH_P_IP))
		return lb4_ingress(skb);
	if (skb->protocol == bpf_htons(ETH_P_IPV6))
		return lb6_ingress(skb);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

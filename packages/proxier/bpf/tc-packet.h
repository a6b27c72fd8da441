/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the tc and XDP programs read of a packet: addresses, protocol, ports and TCP flags, copied out with the
 * hook's load-bytes helper (LB_CTX and lb_load_bytes, which the including program defines: bpf_skb_load_bytes
 * reaches headers outside the linear part too, bpf_xdp_load_bytes across fragments). Ethernet devices only: the
 * L3 header starts at ETH_HLEN. An IPv4 address is word 0 of the arrays.
 */
#ifndef SWITCHYARD_TC_PACKET_H
#define SWITCHYARD_TC_PACKET_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

#define TCP_FLAGS_SYN 0x02
#define TCP_FLAGS_ACK 0x10
/* The flags byte's offset in the TCP header. */
#define TCP_FLAGS_AT 13

struct flow {
	__be32 saddr[4];
	__be32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 tcp_flags;
	__u16 pad;
	/* Where the L4 header starts. */
	__u32 l4_off;
};

/* Ports and, for TCP, the flags; false when the packet is too short for them. */
static __always_inline bool load_l4(LB_CTX *ctx, struct flow *flow)
{
	__be16 ports[2];

	if (lb_load_bytes(ctx, flow->l4_off, ports, sizeof(ports)) < 0)
		return false;
	flow->sport = ports[0];
	flow->dport = ports[1];
	if (flow->proto == IPPROTO_TCP &&
	    lb_load_bytes(ctx, flow->l4_off + TCP_FLAGS_AT, &flow->tcp_flags, 1) < 0)
		return false;
	return true;
}

/*
 * A TCP or UDP packet over IPv4 whose ports are in it: not a fragment after the first (those go on to the
 * kernel's reassembly, and conntrack finds their flow's entry once whole).
 */
static __always_inline bool lb4_parse(LB_CTX *ctx, struct flow *flow)
{
	struct iphdr ip;

	if (lb_load_bytes(ctx, ETH_HLEN, &ip, sizeof(ip)) < 0)
		return false;
	if (ip.version != 4 || ip.ihl < 5 || (ip.frag_off & bpf_htons(IP_OFFSET)))
		return false;
	if (ip.protocol != IPPROTO_TCP && ip.protocol != IPPROTO_UDP)
		return false;
	flow->saddr[0] = ip.saddr;
	flow->daddr[0] = ip.daddr;
	flow->proto = ip.protocol;
	flow->l4_off = ETH_HLEN + ip.ihl * 4;
	return load_l4(ctx, flow);
}

/* A TCP or UDP packet over IPv6 with no extension header before its L4 header (others are left alone). */
static __always_inline bool lb6_parse(LB_CTX *ctx, struct flow *flow)
{
	struct ipv6hdr ip6;

	if (lb_load_bytes(ctx, ETH_HLEN, &ip6, sizeof(ip6)) < 0)
		return false;
	if (ip6.version != 6 || (ip6.nexthdr != IPPROTO_TCP && ip6.nexthdr != IPPROTO_UDP))
		return false;
	__builtin_memcpy(flow->saddr, &ip6.saddr, sizeof(flow->saddr));
	__builtin_memcpy(flow->daddr, &ip6.daddr, sizeof(flow->daddr));
	flow->proto = ip6.nexthdr;
	flow->l4_off = ETH_HLEN + sizeof(ip6);
	return load_l4(ctx, flow);
}

/* Only a SYN without ACK opens a TCP connection; every later packet of it follows the conntrack entry. */
static __always_inline bool opens_connection(const struct flow *flow)
{
	return flow->proto == IPPROTO_UDP ||
	       (flow->tcp_flags & (TCP_FLAGS_SYN | TCP_FLAGS_ACK)) == TCP_FLAGS_SYN;
}

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * REJECT from tc: the packet itself becomes the answer and goes back out of the device it came in on. A TCP
 * segment gets a reset, a UDP datagram ICMP "port unreachable" quoting its IP header and first 8 bytes of L4
 * header; either way the client's connect, or its connected socket's next receive, fails with ECONNREFUSED at
 * once, as under kube-proxy's reject rules. kube-proxy answers TCP with ICMP too; a reset is taken here because
 * the kernel queues it for a socket its owner holds locked (a connect still in its system call when the answer
 * arrives, as over a veth pair), where an ICMP error would only be noted and the connect would wait for its SYN's
 * retransmission. An answer is never larger than what it answers and is not rate-limited (the kernel's ICMP
 * limit does not see it).
 */
#ifndef SWITCHYARD_TC_REJECT_H
#define SWITCHYARD_TC_REJECT_H

#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include "tc-packet.h"

/* <linux/icmp.h> pulls in libc's socket headers, which the bpf target cannot take: the few names needed. */
#define ICMP_DEST_UNREACH 3
#define ICMP_PORT_UNREACH 3
#define ICMPV6_DEST_UNREACH 1
#define ICMPV6_PORT_UNREACH 4
#define IPPROTO_ICMPV6 58

/* ICMP's and ICMPv6's header alike, for the errors sent here (the last word is unused in both). */
struct icmp_error_header {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	__be32 unused;
};

#define ICMP_TTL 64
/* How much of the offending packet's L4 header an ICMP error quotes. */
#define QUOTED_L4 8

static __always_inline __u16 csum_fold(__s64 sum)
{
	__u32 s = (__u32)sum;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* Sends `reply` (ETH_HLEN + size bytes, the Ethernet addresses swapped) back out of the ingress device. */
static __always_inline int send_back(struct __sk_buff *skb, struct ethhdr *eth, void *reply, __u32 size)
{
	unsigned char mac[ETH_ALEN];

	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);
	if (bpf_skb_change_tail(skb, ETH_HLEN + size, 0) < 0)
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, 0, eth, ETH_HLEN, BPF_F_RECOMPUTE_CSUM) < 0 ||
	    bpf_skb_store_bytes(skb, ETH_HLEN, reply, size, BPF_F_RECOMPUTE_CSUM) < 0)
		return TC_ACT_SHOT;
	return bpf_redirect(skb->ifindex, 0);
}

struct icmp4_error {
	struct iphdr ip;
	struct icmp_error_header icmp;
	struct iphdr quoted;
	__u8 quoted_l4[QUOTED_L4];
};

/* IPv4: ICMP destination unreachable, port unreachable, from the frontend's address. Options: dropped. */
static __always_inline int lb4_unreachable(struct __sk_buff *skb, const struct flow *flow)
{
	struct icmp4_error reply = {};
	struct ethhdr eth;

	if (flow->l4_off != ETH_HLEN + sizeof(struct iphdr))
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &reply.quoted, sizeof(reply.quoted) + QUOTED_L4) < 0)
		return TC_ACT_SHOT;
	reply.ip.version = 4;
	reply.ip.ihl = 5;
	reply.ip.tot_len = bpf_htons(sizeof(reply));
	reply.ip.ttl = ICMP_TTL;
	reply.ip.protocol = IPPROTO_ICMP;
	reply.ip.saddr = flow->daddr[0];
	reply.ip.daddr = flow->saddr[0];
	reply.ip.check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)&reply.ip, sizeof(reply.ip), 0));
	reply.icmp.type = ICMP_DEST_UNREACH;
	reply.icmp.code = ICMP_PORT_UNREACH;
	reply.icmp.checksum = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)&reply.icmp,
						      sizeof(reply) - sizeof(reply.ip), 0));
	return send_back(skb, &eth, &reply, sizeof(reply));
}

struct icmp6_error {
	struct ipv6hdr ip6;
	struct icmp_error_header icmp;
	struct ipv6hdr quoted;
	__u8 quoted_l4[QUOTED_L4];
};

/* The part of ICMPv6's checksum the IPv6 header gives besides the addresses: length and next header. */
struct icmp6_pseudo {
	__be32 length;
	__be32 next_header;
};

/* IPv6: ICMPv6 destination unreachable, port unreachable, from the frontend's address. */
static __always_inline int lb6_unreachable(struct __sk_buff *skb, const struct flow *flow)
{
	const __u32 message = sizeof(struct icmp6_error) - sizeof(struct ipv6hdr);
	struct icmp6_pseudo pseudo = { .length = bpf_htonl(message), .next_header = bpf_htonl(IPPROTO_ICMPV6) };
	struct icmp6_error reply = {};
	struct ethhdr eth;
	__s64 sum;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &reply.quoted, sizeof(reply.quoted) + QUOTED_L4) < 0)
		return TC_ACT_SHOT;
	reply.ip6.version = 6;
	reply.ip6.payload_len = bpf_htons(message);
	reply.ip6.nexthdr = IPPROTO_ICMPV6;
	reply.ip6.hop_limit = ICMP_TTL;
	__builtin_memcpy(&reply.ip6.saddr, flow->daddr, sizeof(reply.ip6.saddr));
	__builtin_memcpy(&reply.ip6.daddr, flow->saddr, sizeof(reply.ip6.daddr));
	reply.icmp.type = ICMPV6_DEST_UNREACH;
	reply.icmp.code = ICMPV6_PORT_UNREACH;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&reply.ip6.saddr, 2 * sizeof(reply.ip6.saddr), 0);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&pseudo, sizeof(pseudo), sum);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&reply.icmp, message, sum);
	reply.icmp.checksum = csum_fold(sum);
	return send_back(skb, &eth, &reply, sizeof(reply));
}

/* The TCP header of the reset answering `in`, which carried `payload` bytes (RFC 9293, 3.10.7.1). */
static __always_inline void fill_reset(struct tcphdr *rst, const struct tcphdr *in, __u32 payload)
{
	rst->source = in->dest;
	rst->dest = in->source;
	rst->doff = sizeof(*rst) / 4;
	rst->rst = 1;
	if (in->ack) {
		rst->seq = in->ack_seq;
	} else {
		rst->ack = 1;
		rst->ack_seq = bpf_htonl(bpf_ntohl(in->seq) + payload + in->syn + in->fin);
	}
}

/* The fields of the TCP checksum's pseudo-header the addresses do not give, in IPv4's and IPv6's shape. */
struct tcp4_pseudo {
	__u8 zero;
	__u8 proto;
	__be16 length;
};

struct tcp6_pseudo {
	__be32 length;
	__be32 next_header;
};

struct tcp4_reset {
	struct iphdr ip;
	struct tcphdr tcp;
};

static __always_inline int lb4_reset(struct __sk_buff *skb, const struct flow *flow)
{
	struct tcp4_pseudo pseudo = { .proto = IPPROTO_TCP, .length = bpf_htons(sizeof(struct tcphdr)) };
	struct tcp4_reset reply = {};
	struct tcphdr in;
	struct iphdr ip;
	struct ethhdr eth;
	__s64 sum;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof(ip)) < 0 ||
	    bpf_skb_load_bytes(skb, flow->l4_off, &in, sizeof(in)) < 0)
		return TC_ACT_SHOT;
	fill_reset(&reply.tcp, &in, bpf_ntohs(ip.tot_len) - (flow->l4_off - ETH_HLEN) - in.doff * 4);
	reply.ip.version = 4;
	reply.ip.ihl = 5;
	reply.ip.tot_len = bpf_htons(sizeof(reply));
	reply.ip.ttl = ICMP_TTL;
	reply.ip.protocol = IPPROTO_TCP;
	reply.ip.saddr = flow->daddr[0];
	reply.ip.daddr = flow->saddr[0];
	reply.ip.check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)&reply.ip, sizeof(reply.ip), 0));
	sum = bpf_csum_diff(NULL, 0, &reply.ip.saddr, 2 * sizeof(reply.ip.saddr), 0);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&pseudo, sizeof(pseudo), sum);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&reply.tcp, sizeof(reply.tcp), sum);
	reply.tcp.check = csum_fold(sum);
	return send_back(skb, &eth, &reply, sizeof(reply));
}

struct tcp6_reset {
	struct ipv6hdr ip6;
	struct tcphdr tcp;
};

static __always_inline int lb6_reset(struct __sk_buff *skb, const struct flow *flow)
{
	struct tcp6_pseudo pseudo = {
		.length = bpf_htonl(sizeof(struct tcphdr)),
		.next_header = bpf_htonl(IPPROTO_TCP),
	};
	struct tcp6_reset reply = {};
	struct ipv6hdr ip6;
	struct tcphdr in;
	struct ethhdr eth;
	__s64 sum;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0 ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &ip6, sizeof(ip6)) < 0 ||
	    bpf_skb_load_bytes(skb, flow->l4_off, &in, sizeof(in)) < 0)
		return TC_ACT_SHOT;
	fill_reset(&reply.tcp, &in, bpf_ntohs(ip6.payload_len) - in.doff * 4);
	reply.ip6.version = 6;
	reply.ip6.payload_len = bpf_htons(sizeof(struct tcphdr));
	reply.ip6.nexthdr = IPPROTO_TCP;
	reply.ip6.hop_limit = ICMP_TTL;
	__builtin_memcpy(&reply.ip6.saddr, flow->daddr, sizeof(reply.ip6.saddr));
	__builtin_memcpy(&reply.ip6.daddr, flow->saddr, sizeof(reply.ip6.daddr));
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&reply.ip6.saddr, 2 * sizeof(reply.ip6.saddr), 0);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&pseudo, sizeof(pseudo), sum);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&reply.tcp, sizeof(reply.tcp), sum);
	reply.tcp.check = csum_fold(sum);
	return send_back(skb, &eth, &reply, sizeof(reply));
}

static __always_inline int lb4_reject(struct __sk_buff *skb, const struct flow *flow)
{
	return flow->proto == IPPROTO_TCP ? lb4_reset(skb, flow) : lb4_unreachable(skb, flow);
}

static __always_inline int lb6_reject(struct __sk_buff *skb, const struct flow *flow)
{
	return flow->proto == IPPROTO_TCP ? lb6_reset(skb, flow) : lb6_unreachable(skb, flow);
}

#endif

/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Ends the connected UDP sockets the socket programs sent to a backend that no longer serves the frontend they
 * asked for, as kube-proxy deletes the conntrack entries of such flows. Socket-level balancing rewrites the
 * destination when the socket connects, so no NAT entry exists to delete: the socket itself stays connected to
 * the old backend and would send there for as long as it lives. Ended, it fails its next call with ECONNABORTED,
 * and the application's new socket is balanced again.
 *
 * An iterator over the UDP sockets of one network namespace (the one of the process that creates the iterator;
 * the proxy runs one per namespace whose processes the programs serve). The proxy fills lb*_stale_flows with the
 * (frontend, backend) pairs to end before a run; a socket is ended when it is connected, its peer is a backend
 * the programs chose for it (its lb*_reverse_sk entry, keyed by cookie and backend, names the frontend), and that
 * pair is listed. A socket of the same backend reached through another frontend that still has it, one connected
 * to that address without a service, and an unconnected socket (balanced anew at every send) stay.
 *
 * bpf_sock_destroy is a kfunc, callable only from a GPL-compatible program: hence a separate object, licensed as
 * the kernel asks; the socket programs keep the package's license.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "switchyard_maps.h"

#define AF_INET 2
#define AF_INET6 10
/* The state a UDP socket takes when it connects. */
#define TCP_ESTABLISHED 1

/*
 * The kernel's structs, with only the fields read here: libbpf finds each field in the running kernel's BTF by
 * name (CO-RE), wherever that kernel puts it. The ___sy suffix keeps them apart from any header's own and is
 * ignored when matching.
 */
struct in6_addr___sy {
	union {
		__be32 u6_addr32[4];
	} in6_u;
} __attribute__((preserve_access_index));

struct sock_common___sy {
	__be32 skc_daddr;
	__be16 skc_dport;
	unsigned short skc_family;
	volatile unsigned char skc_state;
	struct in6_addr___sy skc_v6_daddr;
} __attribute__((preserve_access_index));

/* What an iter/udp program is given: the kernel's struct bpf_iter__udp, whose layout is fixed. */
struct udp_iter_ctx {
	void *meta;
	struct sock_common___sy *udp_sk;
};

/* The kfunc; libbpf wants its argument a struct (as the kernel's is), not a declaration without a body. */
extern int bpf_sock_destroy(struct sock_common___sy *sk) __ksym;

static __always_inline bool lb4_load_peer(const struct sock_common___sy *sk, __be32 *address)
{
	if (sk->skc_family != AF_INET)
		return false;
	address[0] = sk->skc_daddr;
	return true;
}

static __always_inline bool lb6_load_peer(const struct sock_common___sy *sk, __be32 *address)
{
	if (sk->skc_family != AF_INET6)
		return false;
	address[0] = sk->skc_v6_daddr.in6_u.u6_addr32[0];
	address[1] = sk->skc_v6_daddr.in6_u.u6_addr32[1];
	address[2] = sk->skc_v6_daddr.in6_u.u6_addr32[2];
	address[3] = sk->skc_v6_daddr.in6_u.u6_addr32[3];
	return true;
}

#define LB(name) LB_NAME(lb4, name)
#include "sock-destroy-lb.h"
#undef LB

#define LB(name) LB_NAME(lb6, name)
#include "sock-destroy-lb.h"
#undef LB

/* Called once per UDP socket of the namespace, and once more with none at the end. */
SEC("iter/udp")
int end_stale_udp4(struct udp_iter_ctx *ctx)
{
	if (ctx->udp_sk)
		lb4_end_if_stale(ctx->udp_sk);
	return 0;
}

SEC("iter/udp")
int end_stale_udp6(struct udp_iter_ctx *ctx)
{
	if (ctx->udp_sk)
		lb6_end_if_stale(ctx->udp_sk);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

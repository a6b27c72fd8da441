/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Switchyard's socket-level load balancing: cgroup sock_addr programs that turn a connection to a service
 * frontend into one to a backend when the application connects (TCP, connected UDP) or sends (unconnected UDP),
 * and show the frontend again where the application asks who its peer is (recvmsg, getpeername). Every process
 * of the cgroup they are attached to is served; no packet of such a flow is NATed and conntrack holds no DNAT
 * entry for it.
 *
 * Only TCP and UDP sockets are touched. IPv6 programs leave IPv4-mapped addresses alone (they find no lb6 entry).
 * The frontend of a UDP socket is remembered per socket (lb*_reverse_sk); a TCP one is not, so getpeername on a
 * TCP socket shows the backend, as Cilium's does: remembering every TCP connect would churn that LRU map at the
 * connection rate and evict the UDP entries replies depend on.
 *
 * Build: bpf/build.mjs (clang -target bpf), with the headers bpf/gen-layout.mjs writes from layout.ts.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "switchyard_maps.h"

/* What a sock_addr program returns: let the call go on, or fail it (EPERM unless bpf_set_retval said else). */
#define SYS_PROCEED 1
#define SYS_REJECT 0

#define ECONNREFUSED 111
#define NSEC_PER_SEC 1000000000ULL

/* Keeps the compiler from merging two 4-byte context accesses into an 8-byte one, which the verifier refuses. */
#define ctx_barrier() asm volatile("" ::: "memory")

/* A frontend without backends: the connect (or send) fails at once with ECONNREFUSED, as a REJECT rule's
 * ICMP port unreachable makes it fail under kube-proxy, instead of the EPERM a bare refusal gives. */
static __always_inline int refuse(void)
{
	bpf_set_retval(-ECONNREFUSED);
	return SYS_REJECT;
}

static __always_inline void lb4_load_user_address(const struct bpf_sock_addr *ctx, __be32 *address)
{
	address[0] = ctx->user_ip4;
}

static __always_inline void lb4_store_user_address(struct bpf_sock_addr *ctx, const __be32 *address)
{
	ctx->user_ip4 = address[0];
}

static __always_inline bool lb4_same_address(const __be32 *a, const __be32 *b)
{
	return a[0] == b[0];
}

/* The address the socket is bound to; false when it is not bound yet (routing picks the source later). */
static __always_inline bool lb4_bound_source(const struct bpf_sock_addr *ctx, __be32 *address)
{
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return false;
	address[0] = sk->src_ip4;
	return address[0] != 0;
}

static __always_inline void lb6_load_user_address(const struct bpf_sock_addr *ctx, __be32 *address)
{
	address[0] = ctx->user_ip6[0];
	ctx_barrier();
	address[1] = ctx->user_ip6[1];
	ctx_barrier();
	address[2] = ctx->user_ip6[2];
	ctx_barrier();
	address[3] = ctx->user_ip6[3];
}

static __always_inline void lb6_store_user_address(struct bpf_sock_addr *ctx, const __be32 *address)
{
	ctx->user_ip6[0] = address[0];
	ctx_barrier();
	ctx->user_ip6[1] = address[1];
	ctx_barrier();
	ctx->user_ip6[2] = address[2];
	ctx_barrier();
	ctx->user_ip6[3] = address[3];
}

static __always_inline bool lb6_bound_source(const struct bpf_sock_addr *ctx, __be32 *address)
{
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return false;
	address[0] = sk->src_ip6[0];
	ctx_barrier();
	address[1] = sk->src_ip6[1];
	ctx_barrier();
	address[2] = sk->src_ip6[2];
	ctx_barrier();
	address[3] = sk->src_ip6[3];
	return (address[0] | address[1] | address[2] | address[3]) != 0;
}

static __always_inline bool lb6_same_address(const __be32 *a, const __be32 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

#define LB(name) LB_NAME(lb4, name)
#include "sock-lb.h"
#undef LB

#define LB(name) LB_NAME(lb6, name)
#include "sock-lb.h"
#undef LB

/*
 * A new connection, or a connected UDP socket, takes a random slot: each connection is balanced on its own.
 * An unconnected UDP socket takes the slot its cookie gives, so its datagrams to one frontend keep reaching one
 * backend, as one conntrack flow keeps them under kube-proxy.
 */
SEC("cgroup/connect4")
int connect4(struct bpf_sock_addr *ctx)
{
	return lb4_forward(ctx, bpf_get_prandom_u32());
}

SEC("cgroup/connect6")
int connect6(struct bpf_sock_addr *ctx)
{
	return lb6_forward(ctx, bpf_get_prandom_u32());
}

SEC("cgroup/sendmsg4")
int sendmsg4(struct bpf_sock_addr *ctx)
{
	return lb4_forward(ctx, (__u32)bpf_get_socket_cookie(ctx));
}

SEC("cgroup/sendmsg6")
int sendmsg6(struct bpf_sock_addr *ctx)
{
	return lb6_forward(ctx, (__u32)bpf_get_socket_cookie(ctx));
}

SEC("cgroup/recvmsg4")
int recvmsg4(struct bpf_sock_addr *ctx)
{
	return lb4_reverse(ctx);
}

SEC("cgroup/recvmsg6")
int recvmsg6(struct bpf_sock_addr *ctx)
{
	return lb6_reverse(ctx);
}

SEC("cgroup/getpeername4")
int getpeername4(struct bpf_sock_addr *ctx)
{
	return lb4_reverse(ctx);
}

SEC("cgroup/getpeername6")
int getpeername6(struct bpf_sock_addr *ctx)
{
	return lb6_reverse(ctx);
}

/* Uses no GPL-only helper, so the package's own license applies. */
char LICENSE[] SEC("license") = "Apache-2.0";

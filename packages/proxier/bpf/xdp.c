/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP side of the balancing of traffic from outside the node (--bpf-lb-acceleration): on the same devices as
 * the tc program (tc.c), run by the driver before the kernel builds a socket buffer. It does the tc program's job
 * with the same code (lb-external.h, tc-lb.h): a packet opening a flow to an EXTERNAL-scope frontend gets its
 * conntrack entry with NAT information here, and XDP_PASS hands the packet to the stack, whose NAT rewrites it.
 * The tc program then meets a flow conntrack already holds and lets it through; it is still the one that answers
 * REJECT frontends: their packets pass from here (XDP_TX of a RST or ICMP error would need this program to build
 * the answer in place, and a rejected client is not the traffic worth accelerating). DROP frontends, and those
 * without backends, drop here, before any socket buffer is spent on them.
 *
 * The conntrack kfuncs are GPL-only, hence this object's license, as tc.c's.
 *
 * Build: bpf/build.mjs, into its own object (switchyard-xdp.bpf.o): the per-family headers name maps and helpers
 * with one macro, so a second hook needs a compilation unit of its own, and a node without acceleration never
 * loads it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define LB_CTX struct xdp_md
#define lb_load_bytes bpf_xdp_load_bytes
#define lb_ct_lookup bpf_xdp_ct_lookup
#define lb_ct_alloc bpf_xdp_ct_alloc
#define LB_PASS XDP_PASS
#define LB_DROP XDP_DROP

struct flow;

/* REJECT: on to the stack, whose tc program answers (see the file's comment). */
static __always_inline int lb4_reject(struct xdp_md *ctx, const struct flow *flow)
{
	return XDP_PASS;
}

static __always_inline int lb6_reject(struct xdp_md *ctx, const struct flow *flow)
{
	return XDP_PASS;
}

#include "lb-external.h"

SEC("xdp")
int xdp_ingress(struct xdp_md *ctx)
{
	struct ethhdr eth;

	if (bpf_xdp_load_bytes(ctx, 0, &eth, sizeof(eth)) < 0)
		return XDP_PASS;
	if (eth.h_proto == bpf_htons(ETH_P_IP))
		return lb4_ingress(ctx);
	if (eth.h_proto == bpf_htons(ETH_P_IPV6))
		return lb6_ingress(ctx);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Switchyard's balancing of traffic from outside the node: a tc (sched_cls) program on the node's external
 * devices' ingress, attached through tcx links. A packet to a NodePort, external IP, load-balancer or ClusterIP
 * frontend (the services map's SCOPE_EXTERNAL entries) is handed to a backend by a conntrack entry the program
 * inserts with NAT information (tc-lb.h, which xdp.c shares through lb-external.h); REJECT and DROP frontends are
 * answered here (tc-reject.h); anything else passes untouched. A flow the XDP program (xdp.c) already gave an
 * entry passes too: the lookup that comes first finds it. The kernel's NAT needs its hooks in the namespace: the
 * loader (bpf-tc.ts) keeps an nftables nat chain there for that.
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
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define LB_CTX struct __sk_buff
#define lb_load_bytes bpf_skb_load_bytes
#define lb_ct_lookup bpf_skb_ct_lookup
#define lb_ct_alloc bpf_skb_ct_alloc
#define LB_PASS TC_ACT_UNSPEC
#define LB_DROP TC_ACT_SHOT

#include "tc-reject.h"
#include "lb-external.h"

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

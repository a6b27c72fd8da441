/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A measuring prototype of the design not taken (see tc.c for the one taken): balancing traffic from outside the
 * node with conntrack and NAT maps of the program's own, as Cilium does, instead of the kernel's conntrack. IPv4
 * only, masquerade always; no timeouts (the LRU maps evict), no ICMP errors translated, no REJECT. It is not built
 * into dist/: test/kernel/ebpf-tc-measure.ts compiles and loads it to compare the two designs on the same
 * topology, and its maps are its own (layout.ts would hold them were it kept).
 *
 *   tc_ownct_ingress  on the external device: a reply to a translated flow (a remote backend's) is translated
 *                     back; a packet to a frontend of scope EXTERNAL is sent to a backend from the masquerade
 *                     address and a port of the program's choosing, the flow remembered both ways.
 *   tc_ownct_reply    on the device local backends answer through: their replies are translated back.
 * Both rewrite the packet (checksums with bpf_l3/l4_csum_replace) and hand it straight to the device the FIB
 * names (bpf_redirect_neigh): a packet from the node's own address must not enter the stack, which would drop
 * it as a martian, and the stack's netfilter never sees these flows.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>

#include "switchyard_maps.h"

#define LB_CTX struct __sk_buff
#define lb_load_bytes bpf_skb_load_bytes
#include "tc-packet.h"

#define NSEC_PER_SEC 1000000000ULL
#define AF_INET 2
/* Ports the prototype takes for masquerading when the client's own is held: Linux's default ephemeral range. */
#define SNAT_PORT_MIN 32768
#define SNAT_PORT_SPAN 28232
#define SNAT_PORT_TRIES 4

/* One direction of a flow as a packet shows it. */
struct ownct_tuple {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 pad[3];
};

/* What the packets of a tuple become. */
struct ownct_nat {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 262144);
	__type(key, struct ownct_tuple);
	__type(value, struct ownct_nat);
} ownct_forward SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 262144);
	__type(key, struct ownct_tuple);
	__type(value, struct ownct_nat);
} ownct_reverse SEC(".maps");

#define IP_CSUM_AT (ETH_HLEN + offsetof(struct iphdr, check))
#define IP_SADDR_AT (ETH_HLEN + offsetof(struct iphdr, saddr))
#define IP_DADDR_AT (ETH_HLEN + offsetof(struct iphdr, daddr))

static __always_inline __u32 l4_csum_at(const struct flow *flow)
{
	return flow->l4_off + (flow->proto == IPPROTO_TCP ? offsetof(struct tcphdr, check) : offsetof(struct udphdr, check));
}

/* Rewrites one address and its port, with the IP and L4 checksums. */
static __always_inline int rewrite(struct __sk_buff *skb, const struct flow *flow, __u32 addr_at, __be32 from,
				   __be32 to, __u32 port_at, __be16 from_port, __be16 to_port)
{
	const __u32 l4_csum = l4_csum_at(flow);
	const __u64 mangled = flow->proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;

	if (bpf_l4_csum_replace(skb, l4_csum, from, to, BPF_F_PSEUDO_HDR | mangled | sizeof(to)) < 0 ||
	    bpf_l3_csum_replace(skb, IP_CSUM_AT, from, to, sizeof(to)) < 0 ||
	    bpf_skb_store_bytes(skb, addr_at, &to, sizeof(to), 0) < 0)
		return -1;
	if (bpf_l4_csum_replace(skb, l4_csum, from_port, to_port, mangled | sizeof(to_port)) < 0 ||
	    bpf_skb_store_bytes(skb, port_at, &to_port, sizeof(to_port), 0) < 0)
		return -1;
	return 0;
}

/* The packet now carries `nat`'s addresses and ports: out of the device the FIB names for its destination. */
static __always_inline int translate_and_send(struct __sk_buff *skb, const struct flow *flow,
					      const struct ownct_nat *nat)
{
	struct bpf_fib_lookup fib = { .family = AF_INET, .l4_protocol = flow->proto, .ifindex = skb->ingress_ifindex };

	if (rewrite(skb, flow, IP_SADDR_AT, flow->saddr[0], nat->saddr, flow->l4_off, flow->sport, nat->sport) < 0 ||
	    rewrite(skb, flow, IP_DADDR_AT, flow->daddr[0], nat->daddr, flow->l4_off + 2, flow->dport, nat->dport) < 0)
		return TC_ACT_SHOT;
	fib.ipv4_src = nat->saddr;
	fib.ipv4_dst = nat->daddr;
	fib.sport = nat->sport;
	fib.dport = nat->dport;
	/* tot_len stays 0: the helper then checks the MTU against the skb itself, which knows a GSO packet's segments. */
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_SKIP_NEIGH) != BPF_FIB_LKUP_RET_SUCCESS)
		return TC_ACT_SHOT;
	return bpf_redirect_neigh(fib.ifindex, NULL, 0, 0);
}

static __always_inline struct lb4_backend *choose_backend(struct lb4_key *frontend, const struct lb4_service *svc)
{
	struct lb4_key slot = *frontend;
	struct lb4_backend_key id = {};
	struct lb4_service *entry;

	slot.backend_slot = 1 + bpf_get_prandom_u32() % svc->count;
	entry = bpf_map_lookup_elem(&lb4_services, &slot);
	if (!entry)
		return NULL;
	id.backend_id = entry->backend_id;
	return bpf_map_lookup_elem(&lb4_backends, &id);
}

/* Remembers a new flow both ways, masqueraded from `node` and a port no other flow to that backend holds. */
static __always_inline struct ownct_nat *track(const struct ownct_tuple *original, const struct lb4_backend *backend,
					       __be32 node)
{
	struct ownct_nat forward = { .saddr = node, .daddr = backend->address, .dport = backend->port };
	struct ownct_tuple reply = { .saddr = backend->address, .daddr = node, .sport = backend->port,
				     .proto = original->proto };
	struct ownct_nat back = { .saddr = original->daddr, .daddr = original->saddr, .sport = original->dport,
				  .dport = original->sport };
	__be16 port = original->sport;

	for (int i = 0; i < SNAT_PORT_TRIES; i++) {
		reply.dport = port;
		if (bpf_map_update_elem(&ownct_reverse, &reply, &back, BPF_NOEXIST) == 0) {
			forward.sport = port;
			bpf_map_update_elem(&ownct_forward, original, &forward, BPF_ANY);
			return bpf_map_lookup_elem(&ownct_forward, original);
		}
		port = bpf_htons(SNAT_PORT_MIN + bpf_get_prandom_u32() % SNAT_PORT_SPAN);
	}
	return NULL;
}

static __always_inline void tuple_of(const struct flow *flow, struct ownct_tuple *tuple)
{
	tuple->saddr = flow->saddr[0];
	tuple->daddr = flow->daddr[0];
	tuple->sport = flow->sport;
	tuple->dport = flow->dport;
	tuple->proto = flow->proto;
}

/* A reply of a translated flow: back to the client, from the frontend. */
static __always_inline int reply(struct __sk_buff *skb, const struct flow *flow, bool *handled)
{
	struct ownct_tuple tuple = {};
	struct ownct_nat *back;

	tuple_of(flow, &tuple);
	back = bpf_map_lookup_elem(&ownct_reverse, &tuple);
	*handled = back != NULL;
	return back ? translate_and_send(skb, flow, back) : TC_ACT_UNSPEC;
}

SEC("tc")
int tc_ownct_ingress(struct __sk_buff *skb)
{
	struct lb4_masquerade_key slot = {};
	struct ownct_tuple tuple = {};
	struct lb4_key frontend = {};
	struct lb4_masquerade *node;
	struct lb4_backend *backend;
	struct ownct_nat *nat;
	struct lb4_service *svc;
	struct flow flow = {};
	bool handled;
	int verdict;

	if (skb->protocol != bpf_htons(ETH_P_IP) || !lb4_parse(skb, &flow))
		return TC_ACT_UNSPEC;
	verdict = reply(skb, &flow, &handled);
	if (handled)
		return verdict;
	frontend.dport = flow.dport;
	frontend.proto = flow.proto;
	frontend.scope = SCOPE_EXTERNAL;
	frontend.address = flow.daddr[0];
	svc = bpf_map_lookup_elem(&lb4_services, &frontend);
	if (!svc)
		return TC_ACT_UNSPEC;
	if (svc->count == 0 || (svc->flags & (SVC_FLAG_REJECT | SVC_FLAG_DROP)))
		return TC_ACT_SHOT;
	tuple_of(&flow, &tuple);
	nat = bpf_map_lookup_elem(&ownct_forward, &tuple);
	if (!nat) {
		node = bpf_map_lookup_elem(&lb4_masquerade, &slot);
		backend = node && opens_connection(&flow) ? choose_backend(&frontend, svc) : NULL;
		nat = backend ? track(&tuple, backend, node->address) : NULL;
		if (!nat)
			return TC_ACT_SHOT;
	}
	return translate_and_send(skb, &flow, nat);
}

SEC("tc")
int tc_ownct_reply(struct __sk_buff *skb)
{
	struct flow flow = {};
	bool handled;

	if (skb->protocol != bpf_htons(ETH_P_IP) || !lb4_parse(skb, &flow))
		return TC_ACT_UNSPEC;
	return reply(skb, &flow, &handled);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

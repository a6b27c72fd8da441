/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One family's balancing of traffic from outside the node. tc.c and xdp.c include this file (through
 * tc-lb-hook.h) once per family with LB(x) naming that family's structs, maps and helpers (lb4_x or lb6_x), as
 * sock.c does with sock-lb.h; the hook's context, conntrack kfuncs and verdicts come from tc-lb-hook.h.
 *
 * A packet to a frontend of scope EXTERNAL that opens a flow gets a conntrack entry from the program, before
 * the kernel's conntrack sees the packet: its original tuple is the packet's, and its NAT information sends it
 * to the chosen backend and, unless the service keeps the client's address (EXTERNAL_LOCAL), from the node's
 * masquerade address. The kernel's NAT then rewrites this packet, every later one of the flow and the replies
 * in both directions, whatever device they come through; `conntrack -L` lists the flow.
 */

static __always_inline struct LB(service) *LB(external_frontend)(const struct flow *flow, struct LB(key) *key)
{
	key->dport = flow->dport;
	key->proto = flow->proto;
	key->scope = SCOPE_EXTERNAL;
	__builtin_memcpy(&key->address, flow->daddr, sizeof(key->address));
	return bpf_map_lookup_elem(&LB(services), key);
}

static __always_inline struct LB(backend) *LB(backend_by_id)(__u32 backend_id)
{
	struct LB(backend_key) key = { .backend_id = backend_id };

	return bpf_map_lookup_elem(&LB(backends), &key);
}

/* The backend service slot `slot` (1..count) names, and its id; NULL when either is missing. */
static __always_inline struct LB(backend) *LB(backend_in_slot)(const struct LB(key) *frontend, __u16 slot,
							       __u32 *backend_id)
{
	struct LB(key) key = *frontend;
	struct LB(service) *entry;

	key.backend_slot = slot;
	entry = bpf_map_lookup_elem(&LB(services), &key);
	if (!entry)
		return NULL;
	*backend_id = entry->backend_id;
	return LB(backend_by_id)(entry->backend_id);
}

/*
 * The backend of a new flow: a random slot or, with ClientIP affinity, the backend this client address was last
 * sent to while within the timeout (each use refreshes it).
 */
static __always_inline struct LB(backend) *LB(choose_backend)(const struct LB(key) *frontend,
							      const struct LB(service) *svc, const struct flow *flow)
{
	const bool affine = svc->flags & SVC_FLAG_AFFINITY;
	struct LB(affinity_key) client = { .rev_nat_index = svc->rev_nat_index };
	struct LB(backend) *backend = NULL;
	struct LB(affinity) *seen;
	__u32 backend_id = 0;
	__u64 now = 0;

	if (affine) {
		client.client_id = LB(client_id)(flow->saddr);
		now = bpf_ktime_get_ns();
		seen = bpf_map_lookup_elem(&LB(affinity), &client);
		if (seen && now - seen->last_used <= (__u64)svc->affinity_timeout * NSEC_PER_SEC) {
			backend_id = seen->backend_id;
			backend = LB(backend_by_id)(backend_id);
		}
	}
	if (!backend)
		backend = LB(backend_in_slot)(frontend, 1 + bpf_get_prandom_u32() % svc->count, &backend_id);
	if (backend && affine) {
		struct LB(affinity) fresh = { .last_used = now, .backend_id = backend_id };

		bpf_map_update_elem(&LB(affinity), &client, &fresh, BPF_ANY);
	}
	return backend;
}

/*
 * Whether conntrack already has this flow. A SYN meeting an entry conntrack would reopen (a client port reused
 * after TIME_WAIT or CLOSE) is not "had": conntrack would kill that entry and start one without NAT, so the
 * program expires it, and the second lookup, which meets it expired, lets the kernel reap it.
 */
static __always_inline bool LB(tracked)(LB_CTX *ctx, struct bpf_sock_tuple *tuple, struct bpf_ct_opts *opts)
{
	struct nf_conn *ct = lb_ct_lookup(ctx, tuple, LB(tuple_size), opts, sizeof(*opts));
	__u8 state;

	if (!ct)
		return false;
	state = opts->l4proto == IPPROTO_TCP ? ct->proto.tcp.state : 0;
	if (state != TCP_CONNTRACK_TIME_WAIT && state != TCP_CONNTRACK_CLOSE) {
		bpf_ct_release(ct);
		return true;
	}
	bpf_ct_change_timeout(ct, 0);
	bpf_ct_release(ct);
	ct = lb_ct_lookup(ctx, tuple, LB(tuple_size), opts, sizeof(*opts));
	if (ct)
		bpf_ct_release(ct);
	return ct != NULL;
}

/*
 * Inserts the conntrack entry that carries a new flow to `backend`. An entry that cannot get its NAT is inserted
 * expired (an allocated entry can only leave through insertion) and the packet dropped: the client's
 * retransmission tries again. Losing an insertion race to another CPU is fine: conntrack finds the winner's.
 */
static __always_inline int LB(track_to_backend)(LB_CTX *ctx, struct bpf_sock_tuple *tuple,
						struct bpf_ct_opts *opts, const struct LB(backend) *backend,
						bool masquerade)
{
	struct LB(masquerade_key) slot = {};
	struct LB(masquerade) *node;
	union nf_inet_addr to = {};
	struct nf_conn___init *fresh;
	struct nf_conn *inserted;
	int err;

	fresh = lb_ct_alloc(ctx, tuple, LB(tuple_size), opts, sizeof(*opts));
	if (!fresh)
		return LB_DROP;
	__builtin_memcpy(&to, &backend->address, sizeof(backend->address));
	err = bpf_ct_set_nat_info(fresh, &to, bpf_ntohs(backend->port), NF_NAT_MANIP_DST);
	node = masquerade ? bpf_map_lookup_elem(&LB(masquerade), &slot) : NULL;
	if (!err && node) {
		union nf_inet_addr from = {};

		__builtin_memcpy(&from, &node->address, sizeof(node->address));
		/* Port 0: the client's port is kept unless another flow holds it, then conntrack picks one. */
		err = bpf_ct_set_nat_info(fresh, &from, 0, NF_NAT_MANIP_SRC);
	}
	if (err)
		bpf_ct_set_timeout(fresh, 0);
	inserted = bpf_ct_insert_entry(fresh);
	if (inserted)
		bpf_ct_release(inserted);
	return err ? LB_DROP : LB_PASS;
}

/*
 * loadBalancerSourceRanges: whether the frontend with this reverse NAT index admits the packet's source, the
 * longest-prefix lookup of (index, source) finding an entry.
 */
static __always_inline bool LB(source_admitted)(const struct flow *flow, __u16 rev_nat_index)
{
	struct LB(src_range_key) key = {
		.prefix_len = SOURCE_RANGE_KEY_BITS + 8 * sizeof(key.address),
		.rev_nat_index = rev_nat_index,
	};

	__builtin_memcpy(&key.address, flow->saddr, sizeof(key.address));
	return bpf_map_lookup_elem(&LB(src_range), &key) != NULL;
}

/*
 * Ingress for one family. Not a frontend of ours: the next program, or the stack, has the packet untouched
 * (LB_PASS: tcx's "next", XDP_PASS). A source its source ranges do not admit drops first, whatever the endpoints
 * (kube-proxy filters sources before its endpoint dispatch); then REJECT answers (tc-reject.h), DROP and a
 * frontend without backends drop. A packet that opens no flow (a TCP segment other than the first SYN) passes:
 * conntrack holds its flow.
 */
static __always_inline int LB(ingress)(LB_CTX *ctx)
{
	struct bpf_ct_opts opts = { .netns_id = CT_CURRENT_NETNS };
	struct bpf_sock_tuple tuple = {};
	struct LB(key) frontend = {};
	struct LB(backend) *backend;
	struct LB(service) *svc;
	struct flow flow = {};

	if (!LB(parse)(ctx, &flow))
		return LB_PASS;
	svc = LB(external_frontend)(&flow, &frontend);
	if (!svc)
		return LB_PASS;
	if ((svc->flags & SVC_FLAG_SOURCE_RANGES) && !LB(source_admitted)(&flow, svc->rev_nat_index))
		return LB_DROP;
	if (svc->flags & SVC_FLAG_REJECT)
		return LB(reject)(ctx, &flow);
	if ((svc->flags & SVC_FLAG_DROP) || svc->count == 0)
		return LB_DROP;
	if (!opens_connection(&flow))
		return LB_PASS;
	LB(fill_tuple)(&flow, &tuple);
	opts.l4proto = flow.proto;
	if (LB(tracked)(ctx, &tuple, &opts))
		return LB_PASS;
	backend = LB(choose_backend)(&frontend, svc, &flow);
	if (!backend)
		/* A slot or backend missing mid-update (the renderer orders writes so none should be). */
		return LB_DROP;
	return LB(track_to_backend)(ctx, &tuple, &opts, backend, !(svc->flags & SVC_FLAG_EXTERNAL_LOCAL));
}

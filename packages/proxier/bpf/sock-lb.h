/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One family's socket-level load balancing. sock.c includes this file once per family, with LB(x) naming that
 * family's structs, maps and address helpers (lb4_x or lb6_x), so both families run the same logic on their own
 * key shapes. The structs and maps come from the generated switchyard_maps.h (layout.ts).
 */

/*
 * The service entry (slot 0) the node's own sockets balance over for `key` (its address, port and protocol set),
 * or NULL when the frontend is no service of ours. The external scope is always there; only when its flags say
 * the scopes differ is the internal one read. `key->scope` is left naming the scope whose slots to follow.
 */
static __always_inline struct LB(service) *LB(lookup_frontend)(struct LB(key) *key)
{
	struct LB(service) *svc;

	key->backend_slot = 0;
	key->scope = SCOPE_EXTERNAL;
	svc = bpf_map_lookup_elem(&LB(services), key);
	if (!svc || !(svc->flags & SVC_FLAG_TWO_SCOPES))
		return svc;
	key->scope = SCOPE_INTERNAL;
	return bpf_map_lookup_elem(&LB(services), key);
}

static __always_inline struct LB(backend) *LB(lookup_backend)(__u32 backend_id)
{
	struct LB(backend_key) key = { .backend_id = backend_id };

	return bpf_map_lookup_elem(&LB(backends), &key);
}

/* The backend a service slot (1..count) names, and its id; NULL when either is missing. */
static __always_inline struct LB(backend) *LB(slot_backend)(struct LB(key) *frontend, __u16 slot, __u32 *backend_id)
{
	struct LB(key) key = *frontend;
	struct LB(service) *entry;

	key.backend_slot = slot;
	entry = bpf_map_lookup_elem(&LB(services), &key);
	if (!entry)
		return NULL;
	*backend_id = entry->backend_id;
	return LB(lookup_backend)(entry->backend_id);
}

/*
 * The backend for a new flow to `svc`. With ClientIP affinity the client is its network namespace (what a socket
 * hook knows of it): the backend it was last sent to is kept while it was used within the timeout and still
 * exists, and each use refreshes the entry. Otherwise `choice` picks one of the slots.
 */
static __always_inline struct LB(backend) *LB(pick_backend)(struct bpf_sock_addr *ctx, struct LB(key) *frontend,
								const struct LB(service) *svc, __u32 choice)
{
	const bool affine = svc->flags & SVC_FLAG_AFFINITY;
	struct LB(affinity_key) client = { .rev_nat_index = svc->rev_nat_index };
	struct LB(backend) *backend = NULL;
	struct LB(affinity) *seen;
	__u32 backend_id = 0;
	__u64 now = 0;

	if (affine) {
		client.client_id = bpf_get_netns_cookie(ctx);
		now = bpf_ktime_get_ns();
		seen = bpf_map_lookup_elem(&LB(affinity), &client);
		if (seen && now - seen->last_used <= (__u64)svc->affinity_timeout * NSEC_PER_SEC) {
			backend_id = seen->backend_id;
			backend = LB(lookup_backend)(backend_id);
		}
	}
	if (!backend)
		backend = LB(slot_backend)(frontend, 1 + choice % svc->count, &backend_id);
	if (backend && affine) {
		struct LB(affinity) fresh = { .last_used = now, .backend_id = backend_id };

		bpf_map_update_elem(&LB(affinity), &client, &fresh, BPF_ANY);
	}
	return backend;
}

/*
 * Remembers, for this socket and the backend it now talks to, the frontend the application asked for: recvmsg
 * and getpeername give it back. Written only when it changed, since an unconnected UDP socket passes here on
 * every datagram. A failed write is not fatal: the flow still reaches the backend, whose replies the
 * application then sees as coming from the backend itself.
 */
static __always_inline void LB(remember_frontend)(struct bpf_sock_addr *ctx, const struct LB(key) *frontend,
						  const struct LB(backend) *backend, __u16 rev_nat_index)
{
	struct LB(reverse_sk_key) key = {
		.cookie = bpf_get_socket_cookie(ctx),
		.port = backend->port,
	};
	struct LB(reverse_sk) value = {
		.port = frontend->dport,
		.rev_nat_index = rev_nat_index,
	};
	struct LB(reverse_sk) *known;

	__builtin_memcpy(&key.address, &backend->address, sizeof(key.address));
	__builtin_memcpy(&value.address, &frontend->address, sizeof(value.address));
	known = bpf_map_lookup_elem(&LB(reverse_sk), &key);
	if (known && known->port == value.port && known->rev_nat_index == value.rev_nat_index &&
	    LB(same_address)((const __be32 *)&known->address, (const __be32 *)&value.address))
		return;
	bpf_map_update_elem(&LB(reverse_sk), &key, &value, BPF_ANY);
}

/*
 * loadBalancerSourceRanges for a socket of this node: whether the frontend with this reverse NAT index admits
 * the source its packets will carry. A bound socket has it; an unbound one gets it from routing only after this
 * hook, and is taken to have the node's address (the masquerade map's), the source kube-proxy's firewall sees
 * from a host process. No known node address admits nothing.
 */
static __always_inline bool LB(source_admitted)(struct bpf_sock_addr *ctx, __u16 rev_nat_index)
{
	struct LB(src_range_key) key = {
		.prefix_len = SOURCE_RANGE_KEY_BITS + 8 * sizeof(key.address),
		.rev_nat_index = rev_nat_index,
	};

	if (!LB(bound_source)(ctx, (__be32 *)&key.address)) {
		struct LB(masquerade_key) slot = {};
		struct LB(masquerade) *node = bpf_map_lookup_elem(&LB(masquerade), &slot);

		if (!node)
			return false;
		__builtin_memcpy(&key.address, &node->address, sizeof(key.address));
	}
	return bpf_map_lookup_elem(&LB(src_range), &key) != NULL;
}

/*
 * connect and sendmsg: a frontend of ours becomes one of its backends before the kernel routes anything, so no
 * packet of the flow is ever translated. A frontend with no backend to offer, or whose source ranges do not
 * admit this socket, refuses the call at once (kube-proxy drops such a packet; a socket hook can only refuse).
 */
static __always_inline int LB(forward)(struct bpf_sock_addr *ctx, __u32 choice)
{
	__u32 proto = ctx->protocol;
	struct LB(key) frontend = {};
	struct LB(backend) *backend;
	struct LB(service) *svc;

	if (proto != PROTO_TCP && proto != PROTO_UDP)
		return SYS_PROCEED;
	LB(load_user_address)(ctx, (__be32 *)&frontend.address);
	frontend.dport = (__be16)ctx->user_port;
	frontend.proto = proto;
	svc = LB(lookup_frontend)(&frontend);
	if (!svc)
		return SYS_PROCEED;
	if ((svc->flags & SVC_FLAG_SOURCE_RANGES) && !LB(source_admitted)(ctx, svc->rev_nat_index))
		return refuse();
	if ((svc->flags & (SVC_FLAG_REJECT | SVC_FLAG_DROP)) || svc->count == 0)
		return refuse();
	backend = LB(pick_backend)(ctx, &frontend, svc, choice);
	if (!backend)
		/* A slot or backend missing mid-update (the renderer orders writes so none should be): no backend. */
		return refuse();
	if (proto == PROTO_UDP)
		LB(remember_frontend)(ctx, &frontend, backend, svc->rev_nat_index);
	LB(store_user_address)(ctx, (const __be32 *)&backend->address);
	ctx->user_port = backend->port;
	return SYS_PROCEED;
}

/*
 * recvmsg and getpeername: a peer this socket was sent to in place of a frontend is shown as that frontend,
 * while the service still exists with the same reverse NAT index (else the entry is stale and goes).
 */
static __always_inline int LB(reverse)(struct bpf_sock_addr *ctx)
{
	struct LB(reverse_sk_key) key = {};
	struct LB(key) service = {};
	struct LB(reverse_sk) *frontend;
	struct LB(service) *svc;

	if (ctx->protocol != PROTO_UDP)
		return SYS_PROCEED;
	key.cookie = bpf_get_socket_cookie(ctx);
	LB(load_user_address)(ctx, (__be32 *)&key.address);
	key.port = (__be16)ctx->user_port;
	frontend = bpf_map_lookup_elem(&LB(reverse_sk), &key);
	if (!frontend)
		return SYS_PROCEED;
	__builtin_memcpy(&service.address, &frontend->address, sizeof(service.address));
	service.dport = frontend->port;
	service.proto = PROTO_UDP;
	svc = LB(lookup_frontend)(&service);
	if (!svc || svc->rev_nat_index != frontend->rev_nat_index) {
		bpf_map_delete_elem(&LB(reverse_sk), &key);
		return SYS_PROCEED;
	}
	LB(store_user_address)(ctx, (const __be32 *)&frontend->address);
	ctx->user_port = frontend->port;
	return SYS_PROCEED;
}

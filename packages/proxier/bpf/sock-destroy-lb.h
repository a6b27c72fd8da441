/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * One family's test of a socket against the stale flows; sock-destroy.c includes it once per family with LB(x)
 * naming that family's structs, maps and helpers (lb4_x or lb6_x), as sock.c does with sock-lb.h.
 */

/* Ends `sk` when it is a connected UDP socket of this family that the programs sent along a listed flow. */
static __always_inline void LB(end_if_stale)(struct sock_common___sy *sk)
{
	struct LB(reverse_sk_key) peer = {};
	struct LB(stale_flow_key) flow = {};
	struct LB(reverse_sk) *frontend;
	struct LB(stale_flow) *stale;

	if (!LB(load_peer)(sk, (__be32 *)&peer.address) || sk->skc_state != TCP_ESTABLISHED)
		return;
	peer.port = sk->skc_dport;
	peer.cookie = bpf_get_socket_cookie(sk);
	/* No entry: a socket the programs did not balance (or whose entry the LRU map let go). */
	frontend = bpf_map_lookup_elem(&LB(reverse_sk), &peer);
	if (!frontend)
		return;
	__builtin_memcpy(&flow.frontend_address, &frontend->address, sizeof(flow.frontend_address));
	__builtin_memcpy(&flow.backend_address, &peer.address, sizeof(flow.backend_address));
	flow.frontend_port = frontend->port;
	flow.backend_port = peer.port;
	stale = bpf_map_lookup_elem(&LB(stale_flows), &flow);
	if (!stale)
		return;
	if (bpf_sock_destroy(sk) == 0)
		__sync_fetch_and_add(&stale->ended, 1);
}

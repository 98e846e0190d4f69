/* The NPAs' datagrams (emulator/PROTOCOL.md): HELLO registers a peer and may start the run,
 * DATA enters the link model, KEEPALIVE is answered, BYE unregisters; refusals are counted
 * (and a takeover attempt said on stderr). Housekeeping: keepalives to quiet peers, and a peer
 * silent for peer_timeout is lost. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emu_state.h"
#include "log_line.h"

static void note_peer(struct emu *emu, const char *note)
{
	if (emu->state == RUN_WAITING) {
		sq_event_log_prestart(&emu->log, mono_ns(), note);
		return;
	}
	/* Let the model report what is due first, so the log stays in time order. */
	sq_time_us now = model_now(emu);
	sq_model_advance(emu->model, now);
	struct sq_log_record r = { .t = now, .event = "peer", .note = note };
	sq_event_log_write(&emu->log, &r);
}

static void on_hello(struct emu *emu, const struct sq_classified *c, const struct sq_datagram *d)
{
	uint8_t role = c->h.role;
	if (sq_peers_register(&emu->peers, role, d->src, d->src_len, mono_ns())) {
		char addr[80], note[96];
		sq_sockaddr_text(d->src, addr, sizeof(addr));
		snprintf(note, sizeof(note), "%s up %s", sq_role_name(role), addr);
		note_peer(emu, note);
	}
	/* One clock when the NPA runs on this kernel (same boot id) and the time it sent the HELLO
	 * reads as a moment of the last seconds on ours: then its DATA may carry TUN read times. */
	struct sq_peer *peer = &emu->peers.peer[role];
	peer->shared_clock = emu->has_boot_id && (c->h.flags & SQ_WIRE_FLAG_CLOCK)
			     && sq_wire_clock_offer_matches(c->payload, c->h.length, mono_ns(), emu->boot_id);
	/* The MTU of the direction this peer receives. */
	enum sq_dir receives = role == SQ_ROLE_MOBILE ? SQ_DOWN : SQ_UP;
	uint16_t mtu = (uint16_t)emu->cfg->link.dir[receives].mtu;
	uint8_t payload[2] = { (uint8_t)(mtu >> 8), (uint8_t)mtu };
	emu_send_to_peer(emu, peer, SQ_MSG_WELCOME, peer->shared_clock ? SQ_WIRE_FLAG_CLOCK : 0, payload,
		     sizeof(payload));
	bool both = emu->peers.peer[SQ_ROLE_ROUTER].registered && emu->peers.peer[SQ_ROLE_MOBILE].registered;
	if (both && emu->cfg->autostart == SQ_AUTOSTART_PEERS && emu->state == RUN_WAITING)
		emu_start_run(emu);
}

static void on_data(struct emu *emu, struct sq_classified *c)
{
	struct sq_packet *pkt = sq_pool_get(&emu->pool, c->h.length);
	if (!pkt) {
		fprintf(stderr, "squall-emulator: out of memory for a packet buffer; ending the run\n");
		emu_end_run(emu, "out_of_memory", SQ_EXIT_RUNTIME);
		return;
	}
	memcpy(sq_packet_data(pkt), c->payload, c->h.length);
	pkt->id_text_len = (uint16_t)sq_log_identity_text(&c->id, pkt->id_text, sizeof(pkt->id_text));
	enum sq_dir dir = c->h.role == SQ_ROLE_ROUTER ? SQ_DOWN : SQ_UP;
	/* Every datagram of a receive batch had arrived when the batch was read; a stamped one
	 * arrived when its NPA read it from the TUN (arrival.h: clamped to keep the model's order). */
	enum sq_arrival_kind kind;
	emu->model_t = sq_arrival_time(c->stamped, c->stamp_ns, emu->rx_ns, emu->start_ns, emu->model_t, &kind);
	emu->arrivals[kind]++;
	if (sq_model_arrive(emu->model, dir, emu->model_t, &c->meta, pkt) == 0)
		sq_pool_put(&emu->pool, pkt);   /* the model had no memory for it: it never entered */
}

/* Refusals that mean someone with the run token tried to take over a role or the run: said
 * on stderr (the runner names them in the replication's reason), the first few of each. */
#define INTRUSIONS_SHOWN 8

static void report_intrusion(struct emu *emu, const struct sq_classified *c, const struct sq_datagram *d)
{
	uint64_t n = emu->rejected[c->reason];
	if (n > INTRUSIONS_SHOWN)
		return;
	char from[80], holder[80];
	sq_sockaddr_text(d->src, from, sizeof(from));
	const char *more = n == INTRUSIONS_SHOWN ? " (further ones are only counted)" : "";
	if (c->reason == SQ_REJ_UDP_CONTROL) {
		fprintf(stderr, "squall-emulator: refused a %s datagram from %s: run control is accepted on the "
			"control socket only (counted as udp_control)%s\n", c->h.type == SQ_MSG_STOP ? "STOP" : "START",
			from, more);
		return;
	}
	const struct sq_peer *p = &emu->peers.peer[c->h.role];
	sq_sockaddr_text((const struct sockaddr *)&p->addr, holder, sizeof(holder));
	fprintf(stderr, "squall-emulator: refused a HELLO for the %s role from %s: the %s NPA at %s is alive "
		"(counted as role_taken)%s\n", sq_role_name(c->h.role), from, sq_role_name(c->h.role), holder, more);
}

void emu_on_datagram(struct emu *emu, const struct sq_datagram *d)
{
	struct sq_classified c;
	sq_classify(&emu->peers, emu->cfg->token, emu->state == RUN_STARTED, d, &c);
	if (c.action == SQ_ACT_REJECT) {
		emu->rejected[c.reason]++;
		if (c.reason == SQ_REJ_ROLE_TAKEN || c.reason == SQ_REJ_UDP_CONTROL)
			report_intrusion(emu, &c, d);
		return;
	}
	if (c.action == SQ_ACT_DATA || c.action == SQ_ACT_KEEPALIVE || c.action == SQ_ACT_BYE)
		emu->peers.peer[c.h.role].last_rx_ns = emu->rx_ns;
	char note[32];
	switch (c.action) {
	case SQ_ACT_HELLO:
		on_hello(emu, &c, d);
		break;
	case SQ_ACT_DATA:
		on_data(emu, &c);
		break;
	case SQ_ACT_KEEPALIVE:
		emu_send_to_peer(emu, &emu->peers.peer[c.h.role], SQ_MSG_KEEPALIVE, 0, NULL, 0);
		break;
	case SQ_ACT_BYE:
		sq_peers_unregister(&emu->peers, c.h.role);
		snprintf(note, sizeof(note), "%s bye", sq_role_name(c.h.role));
		note_peer(emu, note);
		break;
	case SQ_ACT_REJECT:
		break;
	}
}

void emu_check_peers(struct emu *emu, int64_t now)
{
	for (uint8_t role = SQ_ROLE_ROUTER; role <= SQ_ROLE_MOBILE; role++) {
		struct sq_peer *p = &emu->peers.peer[role];
		if (!p->registered)
			continue;
		if (now - p->last_rx_ns >= emu->cfg->peer_timeout * 1000) {
			char note[32];
			snprintf(note, sizeof(note), "%s lost", sq_role_name(role));
			note_peer(emu, note);
			sq_peers_unregister(&emu->peers, role);
			fprintf(stderr, "squall-emulator: the %s NPA sent nothing for %" PRId64
				" ms (peer_timeout): it is lost\n", sq_role_name(role), emu->cfg->peer_timeout / 1000);
			if (emu->state == RUN_STARTED)
				emu_end_run(emu, role == SQ_ROLE_ROUTER ? "router_lost" : "mobile_lost", SQ_EXIT_PEER_LOST);
			continue;
		}
		if (now - p->last_tx_ns >= emu->cfg->keepalive * 1000)
			emu_send_to_peer(emu, p, SQ_MSG_KEEPALIVE, 0, NULL, 0);
	}
}

int64_t emu_next_housekeeping_ns(const struct emu *emu)
{
	int64_t next = MAX_NS;
	for (uint8_t role = SQ_ROLE_ROUTER; role <= SQ_ROLE_MOBILE; role++) {
		const struct sq_peer *p = &emu->peers.peer[role];
		if (!p->registered)
			continue;
		int64_t lost = p->last_rx_ns + emu->cfg->peer_timeout * 1000;
		int64_t keep = p->last_tx_ns + emu->cfg->keepalive * 1000;
		next = lost < next ? lost : next;
		next = keep < next ? keep : next;
	}
	return next;
}

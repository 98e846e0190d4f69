/* The NPAs' datagrams (emulator/PROTOCOL.md): HELLO registers a peer and may start the run,
 * DATA enters the link model, KEEPALIVE is answered, BYE unregisters; refusals are counted
 * (and a takeover attempt said on stderr). Housekeeping: keepalives to quiet peers, and a peer
 * silent for peer_timeout is lost. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cell_config.h"
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

/* Whether the router NPA and every host's mobile NPA have registered. */
static bool all_registered(const struct emu *emu)
{
	for (uint8_t slot = SQ_ROLE_ROUTER; slot <= sq_peers_last_slot(&emu->peers); slot++)
		if (!emu->peers.peer[slot].registered)
			return false;
	return true;
}

/* The MTU of the direction the peer of slot receives: up for the router, its host's down. */
static uint16_t mtu_received(const struct emu *emu, uint8_t slot)
{
	if (slot == SQ_ROLE_ROUTER)
		return (uint16_t)emu->cfg->link.dir[SQ_UP].mtu;
	return (uint16_t)sq_host_direction(&emu->cfg->link, slot - SQ_ROLE_MOBILE, SQ_DOWN).mtu;
}

static void on_hello(struct emu *emu, const struct sq_classified *c, const struct sq_datagram *d)
{
	uint8_t slot = c->slot;
	if (sq_peers_register(&emu->peers, slot, d->src, d->src_len, mono_ns())) {
		char addr[80], name[16], note[112];
		sq_sockaddr_text(d->src, addr, sizeof(addr));
		sq_peer_name(slot, name, sizeof(name));
		snprintf(note, sizeof(note), "%s up %s", name, addr);
		note_peer(emu, note);
	}
	/* One clock when the NPA runs on this kernel (same boot id) and the time it sent the HELLO
	 * reads as a moment of the last seconds on ours: then its DATA may carry TUN read times. */
	struct sq_peer *peer = &emu->peers.peer[slot];
	peer->shared_clock = emu->has_boot_id && (c->h.flags & SQ_WIRE_FLAG_CLOCK)
			     && sq_wire_clock_offer_matches(c->payload, c->h.length, mono_ns(), emu->boot_id);
	uint16_t mtu = mtu_received(emu, slot);
	uint8_t payload[2] = { (uint8_t)(mtu >> 8), (uint8_t)mtu };
	emu_send_to_peer(emu, peer, SQ_MSG_WELCOME, peer->shared_clock ? SQ_WIRE_FLAG_CLOCK : 0, payload,
		     sizeof(payload));
	if (all_registered(emu) && emu->cfg->autostart == SQ_AUTOSTART_PEERS && emu->state == RUN_WAITING)
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
	/* Up: the sender's host, whose address this is. Down: the host of the destination. */
	enum sq_dir dir = c->slot == SQ_ROLE_ROUTER ? SQ_DOWN : SQ_UP;
	uint32_t host = dir == SQ_UP ? (uint32_t)(c->slot - SQ_ROLE_MOBILE) : sq_cell_routes_host(&emu->routes, &c->id);
	if (dir == SQ_UP)
		sq_cell_routes_learn(&emu->routes, host, &c->id);
	/* Every datagram of a receive batch had arrived when the batch was read; a stamped one
	 * arrived when its NPA read it from the TUN (arrival.h: clamped to keep the model's order). */
	enum sq_arrival_kind kind;
	emu->model_t = sq_arrival_time(c->stamped, c->stamp_ns, emu->rx_ns, emu->start_ns, emu->model_t, &kind);
	emu->arrivals[kind]++;
	if (sq_model_arrive_host(emu->model, host, dir, emu->model_t, &c->meta, pkt) == 0)
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
	char from[80], holder[80], name[16];
	sq_sockaddr_text(d->src, from, sizeof(from));
	const char *more = n == INTRUSIONS_SHOWN ? " (further ones are only counted)" : "";
	if (c->reason == SQ_REJ_UDP_CONTROL) {
		fprintf(stderr, "squall-emulator: refused a %s datagram from %s: run control is accepted on the "
			"control socket only (counted as udp_control)%s\n", c->h.type == SQ_MSG_STOP ? "STOP" : "START",
			from, more);
		return;
	}
	const struct sq_peer *p = &emu->peers.peer[c->slot];
	sq_sockaddr_text((const struct sockaddr *)&p->addr, holder, sizeof(holder));
	sq_peer_name(c->slot, name, sizeof(name));
	fprintf(stderr, "squall-emulator: refused a HELLO for the %s role from %s: the %s NPA at %s is alive "
		"(counted as role_taken)%s\n", name, from, name, holder, more);
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
		emu->peers.peer[c.slot].last_rx_ns = emu->rx_ns;
	char note[32], name[16];
	switch (c.action) {
	case SQ_ACT_HELLO:
		on_hello(emu, &c, d);
		break;
	case SQ_ACT_DATA:
		on_data(emu, &c);
		break;
	case SQ_ACT_KEEPALIVE:
		emu_send_to_peer(emu, &emu->peers.peer[c.slot], SQ_MSG_KEEPALIVE, 0, NULL, 0);
		break;
	case SQ_ACT_BYE:
		sq_peers_unregister(&emu->peers, c.slot);
		sq_peer_name(c.slot, name, sizeof(name));
		snprintf(note, sizeof(note), "%s bye", name);
		note_peer(emu, note);
		break;
	case SQ_ACT_REJECT:
		break;
	}
}

void emu_check_peers(struct emu *emu, int64_t now)
{
	for (uint8_t slot = SQ_ROLE_ROUTER; slot <= sq_peers_last_slot(&emu->peers); slot++) {
		struct sq_peer *p = &emu->peers.peer[slot];
		if (!p->registered)
			continue;
		if (now - p->last_rx_ns >= emu->cfg->peer_timeout * 1000) {
			char note[32], name[16];
			sq_peer_name(slot, name, sizeof(name));
			snprintf(note, sizeof(note), "%s lost", name);
			note_peer(emu, note);
			sq_peers_unregister(&emu->peers, slot);
			fprintf(stderr, "squall-emulator: the %s NPA sent nothing for %" PRId64
				" ms (peer_timeout): it is lost\n", name, emu->cfg->peer_timeout / 1000);
			if (emu->state == RUN_STARTED)
				emu_end_run(emu, slot == SQ_ROLE_ROUTER ? "router_lost" : "mobile_lost", SQ_EXIT_PEER_LOST);
			continue;
		}
		if (now - p->last_tx_ns >= emu->cfg->keepalive * 1000)
			emu_send_to_peer(emu, p, SQ_MSG_KEEPALIVE, 0, NULL, 0);
	}
}

int64_t emu_next_housekeeping_ns(const struct emu *emu)
{
	int64_t next = MAX_NS;
	for (uint8_t slot = SQ_ROLE_ROUTER; slot <= sq_peers_last_slot(&emu->peers); slot++) {
		const struct sq_peer *p = &emu->peers.peer[slot];
		if (!p->registered)
			continue;
		int64_t lost = p->last_rx_ns + emu->cfg->peer_timeout * 1000;
		int64_t keep = p->last_tx_ns + emu->cfg->keepalive * 1000;
		next = lost < next ? lost : next;
		next = keep < next ? keep : next;
	}
	return next;
}

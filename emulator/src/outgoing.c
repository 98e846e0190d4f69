/* What the emulator sends its NPAs (emulator/PROTOCOL.md): the model's outs as DATA, in
 * batches; decided packets sent ahead with their release time (release_ahead); WELCOME,
 * KEEPALIVE and BYE. Also the model's event callback, which logs every event and frees or
 * delivers its packet, and the clone hook that copies a packet the netem stage duplicates. */
#include <string.h>

#include "ecn_mark.h"
#include "emu_state.h"

/* Down: the mobile NPA of the packet's host; up: the router NPA. */
static struct sq_peer *peer_receiving(struct emu *emu, enum sq_dir dir, uint32_t host)
{
	return &emu->peers.peer[dir == SQ_DOWN ? sq_peer_slot(SQ_ROLE_MOBILE, (uint16_t)(host + 1))
					       : SQ_ROLE_ROUTER];
}

static void encode_header(const struct emu *emu, uint8_t *frame, uint8_t type, uint8_t flags, uint16_t length,
			  uint32_t seq)
{
	struct sq_wire_header h = {
		.version = SQ_WIRE_VERSION, .type = type, .role = SQ_ROLE_SP, .flags = flags,
		.token = emu->cfg->token, .seq = seq, .length = length,
	};
	sq_wire_encode(frame, &h);
}

/* Sends a control message: its payload (at most 8 bytes) after the header. */
static void send_control(struct emu *emu, uint8_t type, uint8_t flags, const void *payload, uint16_t len,
			 uint32_t seq, const struct sockaddr *to, socklen_t to_len)
{
	uint8_t frame[SQ_WIRE_HEADER_LEN + 8];
	if (len > sizeof(frame) - SQ_WIRE_HEADER_LEN)
		return;
	if (len)
		memcpy(frame + SQ_WIRE_HEADER_LEN, payload, len);
	encode_header(emu, frame, type, flags, len, seq);
	if (sendto(emu->sock, frame, SQ_WIRE_HEADER_LEN + (size_t)len, 0, to, to_len) < 0)
		emu->send_errors++;
}

void emu_send_to_peer(struct emu *emu, struct sq_peer *peer, uint8_t type, uint8_t flags, const void *payload,
			 uint16_t len)
{
	send_control(emu, type, flags, payload, len, peer->tx_seq++, (const struct sockaddr *)&peer->addr,
		     peer->addr_len);
	peer->last_tx_ns = mono_ns();
}

/* Sends the queued deliveries. Their send time (for lateness) is the moment
 * the send call starts, as with one sendto each: the call itself includes the
 * kernel's delivery to the receiving NPA's socket. */
void emu_flush_deliveries(struct emu *emu)
{
	unsigned n = udp_send_batch_count(emu->out);
	if (n == 0)
		return;
	bool refused[BATCH];
	int64_t now = mono_ns();
	emu->send_errors += udp_send_batch_flush(emu->out, emu->sock, refused);
	emu->lock_use.send_ns += mono_ns() - now;
	for (unsigned i = 0; i < n; i++) {
		emu->out_peer[i]->last_tx_ns = now;
		if (!emu->out_pkt[i])
			continue;   /* sent ahead: its NPA releases it, its out frees it */
		if (!refused[i])
			sq_lateness_add(&emu->lateness, now - emu->out_sched_ns[i]);
		sq_pool_put(&emu->pool, emu->out_pkt[i]);
	}
}

/* Queues the packet for its NPA; false if it cannot be sent (the caller frees it). */
static bool deliver(struct emu *emu, const struct sq_event *ev, struct sq_packet *pkt)
{
	struct sq_peer *peer = peer_receiving(emu, ev->dir, ev->host);
	if (!peer->registered) {
		emu->undeliverable[ev->dir]++;
		return false;
	}
	if (udp_send_batch_full(emu->out))
		emu_flush_deliveries(emu);
	unsigned i = udp_send_batch_count(emu->out);
	uint8_t *msg = sq_packet_message(pkt, false);
	encode_header(emu, msg, SQ_MSG_DATA, 0, (uint16_t)pkt->len, peer->tx_seq++);
	udp_send_batch_add(emu->out, msg, SQ_WIRE_HEADER_LEN + (size_t)pkt->len,
			   (const struct sockaddr *)&peer->addr, peer->addr_len);
	emu->out_pkt[i] = pkt;
	emu->out_peer[i] = peer;
	emu->out_sched_ns[i] = emu->start_ns + ev->t * 1000;
	return true;
}

/* Queues a decided packet with its release time for its NPA (PROTOCOL.md, "Release at the
 * NPA"); the model keeps it until its out, which only logs and frees it. */
static void send_ahead_one(void *ctx, uint32_t host, enum sq_dir dir, const struct sq_decided_out *o)
{
	struct emu *emu = ctx;
	struct sq_packet *pkt = o->user;
	struct sq_peer *peer = peer_receiving(emu, dir, host);
	if (udp_send_batch_full(emu->out))
		emu_flush_deliveries(emu);
	unsigned i = udp_send_batch_count(emu->out);
	uint8_t *msg = sq_packet_message(pkt, true);
	encode_header(emu, msg, SQ_MSG_DATA, SQ_WIRE_FLAG_CLOCK,
		      (uint16_t)(SQ_WIRE_STAMP_LEN + pkt->len), peer->tx_seq++);
	sq_wire_put_time(msg + SQ_WIRE_HEADER_LEN, emu->start_ns + o->t * 1000);
	udp_send_batch_add(emu->out, msg, SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN + (size_t)pkt->len,
			   (const struct sockaddr *)&peer->addr, peer->addr_len);
	emu->out_pkt[i] = NULL;
	emu->out_peer[i] = peer;
	pkt->sent_ahead = true;
}

/* Packets of a host's dir go ahead only when asked for and to an NPA that reads this clock.
 * In a cell of several hosts only down: each mobile NPA gets its own host's packets, whose
 * release times never go back; the router NPA gets every host's up packets, whose would. */
bool emu_sends_ahead(const struct emu *emu, uint32_t host, enum sq_dir dir)
{
	const struct sq_peer *peer = &emu->peers.peer[dir == SQ_DOWN ? sq_peer_slot(SQ_ROLE_MOBILE, (uint16_t)(host + 1))
									  : SQ_ROLE_ROUTER];
	return emu->cfg->release_ahead > 0 && emu->state == RUN_STARTED && peer->registered &&
	       peer->shared_clock && (dir == SQ_DOWN || emu->peers.hosts <= 1);
}

/* After the model has moved: every decided out due within release_ahead goes now to an
 * NPA on this clock. Sent at once, before the model can reach their outs and free them. */
void emu_send_ahead(struct emu *emu)
{
	if (emu->cfg->release_ahead == 0 || emu->state != RUN_STARTED)
		return;
	/* The clock's time, not the model's: asking must not move the model (arrival.c). */
	sq_time_us until = (mono_ns() - emu->start_ns) / 1000 + emu->cfg->release_ahead;
	for (uint32_t h = 0; h < sq_model_hosts(emu->model); h++)
		for (int d = 0; d < SQ_DIRS; d++)
			if (emu_sends_ahead(emu, h, (enum sq_dir)d))
				sq_send_ahead_run(&emu->ahead, emu->model, h, (enum sq_dir)d, until, send_ahead_one, emu);
	emu_flush_deliveries(emu);
}

/* The netem stage's duplicate: a buffer of its own with the same packet and identity. */
void *emu_clone_packet(void *ctx, void *user)
{
	struct emu *emu = ctx;
	const struct sq_packet *orig = user;
	struct sq_packet *copy = sq_pool_get(&emu->pool, orig->len);
	if (!copy)
		return NULL;   /* the model makes no copy */
	memcpy(sq_packet_data(copy), sq_packet_data((struct sq_packet *)orig), orig->len);
	copy->id_text_len = orig->id_text_len;
	memcpy(copy->id_text, orig->id_text, orig->id_text_len + 1u);
	return copy;
}

void emu_on_model_event(void *ctx, const struct sq_event *ev)
{
	struct emu *emu = ctx;
	struct sq_packet *pkt = ev->user;
	bool queued = ev->type == SQ_EV_OUT && !pkt->sent_ahead && deliver(emu, ev, pkt);
	if (ev->type == SQ_EV_IN || ev->type == SQ_EV_OUT)
		emu->last_in_out = ev->t;
	struct sq_log_record r = sq_log_record_of_event(ev, NULL);
	char note[24];
	r.note = sq_log_event_note(ev, note, sizeof(note), r.note);
	if (pkt && r.pkt_id) {
		r.id_text = pkt->id_text;
		r.id_text_len = pkt->id_text_len;
	}
	sq_event_log_write(&emu->log, &r);
	switch (ev->type) {
	case SQ_EV_CORRUPT:
		/* netem flips the bit and leaves the checksums as they are: so does the emulator */
		if (pkt && ev->corrupt_bit / 8 < pkt->len)
			sq_packet_data(pkt)[ev->corrupt_bit / 8] ^= (uint8_t)(1u << (ev->corrupt_bit % 8));
		break;
	case SQ_EV_ECN_MARK:
		/* The router stage asks for CE instead of a drop: rewrite the packet now,
		 * it is delivered later with the mark. */
		if (pkt)
			sq_ecn_set_ce(sq_packet_data(pkt), pkt->len);
		break;
	case SQ_EV_OUT:
		if (!queued)
			sq_pool_put(&emu->pool, pkt);
		break;
	case SQ_EV_DROP_MTU:
	case SQ_EV_DROP_SBUF:
	case SQ_EV_DROP_ROUTER:
	case SQ_EV_DROP_ERR:
	case SQ_EV_DROP_LOSS:
		sq_pool_put(&emu->pool, pkt);
		break;
	default:
		break;
	}
}

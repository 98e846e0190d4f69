#include "sp.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "arrival.h"
#include "boot_id.h"
#include "control_socket.h"
#include "ecn_mark.h"
#include "event_log.h"
#include "lateness.h"
#include "send_ahead.h"
#include "link_model.h"
#include "packet_pool.h"
#include "peers.h"
#include "standby.h"
#include "udp_socket.h"

#define BATCH 32
#define RECV_SIZE (SQ_WIRE_MAX_DATAGRAM + 1)   /* one more byte reveals an oversized one */
#define MAX_NS INT64_MAX
/* The standby thread (standby.h) wakes at every deadline too, this much after
 * it, and serves it if the loop thread has not. 0: the first awake serves. */
#define STANDBY_GRACE_NS 0
/* The loop thread wakes this much before a delivery and polls until it is due
 * (never more than half the time it would otherwise sleep). */
#define EARLY_NS (50 * 1000)

enum run_state { RUN_WAITING, RUN_STARTED, RUN_ENDED };

struct sp {
	const struct sq_emu_config *cfg;
	int sock, signals, epoll;
	struct sq_model *model;
	struct sq_packet_pool pool;
	struct sq_peers peers;
	/* The loop thread and, when that is late, the standby thread each use
	 * everything in here only holding standby.lock (standby.h). */
	struct sq_standby standby;
	struct sq_lock_use lock_use;           /* the system calls made holding the lock (standby.h) */
	struct sq_event_log log;
	struct sq_lateness lateness;
	struct udp_batch *batch;
	/* Deliveries made due together leave with one sendmmsg; their packets
	 * go back to the pool once sent. */
	struct udp_send_batch *out;
	struct sq_packet *out_pkt[BATCH];      /* NULL: sent ahead, the model still holds it */
	struct sq_peer *out_peer[BATCH];
	int64_t out_sched_ns[BATCH];

	enum run_state state;
	bool was_started;
	int64_t open_ns, open_realtime_us;     /* when the log was opened */
	int64_t start_ns, start_realtime_us;   /* t = 0 */
	sq_time_us model_t;                    /* the latest time given to the model */
	sq_time_us last_in_out;                /* the last packet in or out (-1: none yet) */
	int64_t rx_ns;                         /* when the current receive batch was read */
	char boot_id[SQ_WIRE_BOOT_ID_LEN];     /* this kernel's, for the NPAs' clock offers */
	bool has_boot_id;
	uint64_t arrivals[SQ_ARRIVAL_KINDS];   /* how each arrival's time was chosen */
	int64_t early_for, early_ns;           /* the deadline the loop thread wakes early for, by how much */
	uint64_t rejected[SQ_REJECT_REASONS];
	uint64_t undeliverable[SQ_DIRS];
	uint64_t send_errors;
	struct sq_send_ahead ahead;            /* packets sent before their out (release_ahead) */
	const char *end_reason;
	char end_by[96];                       /* who ended the run: "by_pid P by_uid U by_comm C" */
	int exit_code;
	struct sq_control *control;            /* the Unix socket of START/STOP; NULL if none */
	int stop_conn;                         /* the STOP to answer once the log is complete */
};

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* The model time of the instant now_ns; never earlier than a time the model
 * already had (a batch's receive time may precede a later event's). */
static sq_time_us model_time_at(struct sp *sp, int64_t now_ns)
{
	sq_time_us t = (now_ns - sp->start_ns) / 1000;
	if (t < sp->model_t)
		t = sp->model_t;
	sp->model_t = t;
	return t;
}

static sq_time_us model_now(struct sp *sp)
{
	return model_time_at(sp, mono_ns());
}

/* --- sending ------------------------------------------------------------------------- */

static struct sq_peer *peer_receiving(struct sp *sp, enum sq_dir dir)
{
	return &sp->peers.peer[dir == SQ_DOWN ? SQ_ROLE_MOBILE : SQ_ROLE_ROUTER];
}

static void encode_header(const struct sp *sp, uint8_t *frame, uint8_t type, uint8_t flags, uint16_t length,
			  uint32_t seq)
{
	struct sq_wire_header h = {
		.version = SQ_WIRE_VERSION, .type = type, .role = SQ_ROLE_SP, .flags = flags,
		.token = sp->cfg->token, .seq = seq, .length = length,
	};
	sq_wire_encode(frame, &h);
}

/* Sends a control message: its payload (at most 8 bytes) after the header. */
static void send_control(struct sp *sp, uint8_t type, uint8_t flags, const void *payload, uint16_t len,
			 uint32_t seq, const struct sockaddr *to, socklen_t to_len)
{
	uint8_t frame[SQ_WIRE_HEADER_LEN + 8];
	if (len > sizeof(frame) - SQ_WIRE_HEADER_LEN)
		return;
	if (len)
		memcpy(frame + SQ_WIRE_HEADER_LEN, payload, len);
	encode_header(sp, frame, type, flags, len, seq);
	if (sendto(sp->sock, frame, SQ_WIRE_HEADER_LEN + (size_t)len, 0, to, to_len) < 0)
		sp->send_errors++;
}

static void send_to_peer(struct sp *sp, struct sq_peer *peer, uint8_t type, uint8_t flags, const void *payload,
			 uint16_t len)
{
	send_control(sp, type, flags, payload, len, peer->tx_seq++, (const struct sockaddr *)&peer->addr,
		     peer->addr_len);
	peer->last_tx_ns = mono_ns();
}

/* --- model events -------------------------------------------------------------------- */

/* Sends the queued deliveries. Their send time (for lateness) is the moment
 * the send call starts, as with one sendto each: the call itself includes the
 * kernel's delivery to the receiving NPA's socket. */
static void flush_deliveries(struct sp *sp)
{
	unsigned n = udp_send_batch_count(sp->out);
	if (n == 0)
		return;
	bool refused[BATCH];
	int64_t now = mono_ns();
	sp->send_errors += udp_send_batch_flush(sp->out, sp->sock, refused);
	sp->lock_use.send_ns += mono_ns() - now;
	for (unsigned i = 0; i < n; i++) {
		sp->out_peer[i]->last_tx_ns = now;
		if (!sp->out_pkt[i])
			continue;   /* sent ahead: its NPA releases it, its out frees it */
		if (!refused[i])
			sq_lateness_add(&sp->lateness, now - sp->out_sched_ns[i]);
		sq_pool_put(&sp->pool, sp->out_pkt[i]);
	}
}

/* Queues the packet for its NPA; false if it cannot be sent (the caller frees it). */
static bool deliver(struct sp *sp, const struct sq_event *ev, struct sq_packet *pkt)
{
	struct sq_peer *peer = peer_receiving(sp, ev->dir);
	if (!peer->registered) {
		sp->undeliverable[ev->dir]++;
		return false;
	}
	if (udp_send_batch_full(sp->out))
		flush_deliveries(sp);
	unsigned i = udp_send_batch_count(sp->out);
	uint8_t *msg = sq_packet_message(pkt, false);
	encode_header(sp, msg, SQ_MSG_DATA, 0, (uint16_t)pkt->len, peer->tx_seq++);
	udp_send_batch_add(sp->out, msg, SQ_WIRE_HEADER_LEN + (size_t)pkt->len,
			   (const struct sockaddr *)&peer->addr, peer->addr_len);
	sp->out_pkt[i] = pkt;
	sp->out_peer[i] = peer;
	sp->out_sched_ns[i] = sp->start_ns + ev->t * 1000;
	return true;
}

/* Queues a decided packet with its release time for its NPA (PROTOCOL.md, "Release at the
 * NPA"); the model keeps it until its out, which only logs and frees it. */
static void send_ahead_one(void *ctx, enum sq_dir dir, const struct sq_decided_out *o)
{
	struct sp *sp = ctx;
	struct sq_packet *pkt = o->user;
	struct sq_peer *peer = peer_receiving(sp, dir);
	if (udp_send_batch_full(sp->out))
		flush_deliveries(sp);
	unsigned i = udp_send_batch_count(sp->out);
	uint8_t *msg = sq_packet_message(pkt, true);
	encode_header(sp, msg, SQ_MSG_DATA, SQ_WIRE_FLAG_CLOCK,
		      (uint16_t)(SQ_WIRE_STAMP_LEN + pkt->len), peer->tx_seq++);
	sq_wire_put_time(msg + SQ_WIRE_HEADER_LEN, sp->start_ns + o->t * 1000);
	udp_send_batch_add(sp->out, msg, SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN + (size_t)pkt->len,
			   (const struct sockaddr *)&peer->addr, peer->addr_len);
	sp->out_pkt[i] = NULL;
	sp->out_peer[i] = peer;
	pkt->sent_ahead = true;
}

/* Packets of dir go ahead only when asked for and to an NPA that reads this clock. */
static bool sends_ahead(const struct sp *sp, enum sq_dir dir)
{
	const struct sq_peer *peer = &sp->peers.peer[dir == SQ_DOWN ? SQ_ROLE_MOBILE : SQ_ROLE_ROUTER];
	return sp->cfg->release_ahead > 0 && sp->state == RUN_STARTED && peer->registered &&
	       peer->shared_clock;
}

/* After the model has moved: every decided out due within release_ahead goes now to an
 * NPA on this clock. Sent at once, before the model can reach their outs and free them. */
static void send_ahead(struct sp *sp)
{
	if (sp->cfg->release_ahead == 0 || sp->state != RUN_STARTED)
		return;
	/* The clock's time, not the model's: asking must not move the model (arrival.c). */
	sq_time_us until = (mono_ns() - sp->start_ns) / 1000 + sp->cfg->release_ahead;
	for (int d = 0; d < SQ_DIRS; d++) {
		if (sends_ahead(sp, (enum sq_dir)d))
			sq_send_ahead_run(&sp->ahead, sp->model, (enum sq_dir)d, until, send_ahead_one, sp);
	}
	flush_deliveries(sp);
}

/* The netem stage's duplicate: a buffer of its own with the same packet and identity. */
static void *clone_packet(void *ctx, void *user)
{
	struct sp *sp = ctx;
	const struct sq_packet *orig = user;
	struct sq_packet *copy = sq_pool_get(&sp->pool, orig->len);
	if (!copy)
		return NULL;   /* the model makes no copy */
	memcpy(sq_packet_data(copy), sq_packet_data((struct sq_packet *)orig), orig->len);
	copy->id_text_len = orig->id_text_len;
	memcpy(copy->id_text, orig->id_text, orig->id_text_len + 1u);
	return copy;
}

static void on_model_event(void *ctx, const struct sq_event *ev)
{
	struct sp *sp = ctx;
	struct sq_packet *pkt = ev->user;
	bool queued = ev->type == SQ_EV_OUT && !pkt->sent_ahead && deliver(sp, ev, pkt);
	if (ev->type == SQ_EV_IN || ev->type == SQ_EV_OUT)
		sp->last_in_out = ev->t;
	struct sq_log_record r = sq_log_record_of_event(ev, NULL);
	char note[24];
	r.note = sq_log_event_note(ev, note, sizeof(note), r.note);
	if (pkt && r.pkt_id) {
		r.id_text = pkt->id_text;
		r.id_text_len = pkt->id_text_len;
	}
	sq_event_log_write(&sp->log, &r);
	switch (ev->type) {
	case SQ_EV_CORRUPT:
		/* netem flips the bit and leaves the checksums as they are: so does the SP */
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
			sq_pool_put(&sp->pool, pkt);
		break;
	case SQ_EV_DROP_MTU:
	case SQ_EV_DROP_SBUF:
	case SQ_EV_DROP_ROUTER:
	case SQ_EV_DROP_ERR:
	case SQ_EV_DROP_LOSS:
		sq_pool_put(&sp->pool, pkt);
		break;
	default:
		break;
	}
}

/* --- peers and run control ----------------------------------------------------------- */

static void note_peer(struct sp *sp, const char *note)
{
	if (sp->state == RUN_WAITING) {
		sq_event_log_prestart(&sp->log, mono_ns(), note);
		return;
	}
	/* Let the model report what is due first, so the log stays in time order. */
	sq_time_us now = model_now(sp);
	sq_model_advance(sp->model, now);
	struct sq_log_record r = { .t = now, .event = "peer", .note = note };
	sq_event_log_write(&sp->log, &r);
}

static void start_run(struct sp *sp)
{
	sp->start_ns = mono_ns();
	sp->model_t = 0;
	sp->last_in_out = -1;
	sp->start_realtime_us = clock_ns(CLOCK_REALTIME) / 1000;
	sp->state = RUN_STARTED;
	sp->was_started = true;
	sq_event_log_header(&sp->log, sp->cfg, true, sp->start_ns, sp->start_realtime_us);
	char note[32];
	snprintf(note, sizeof(note), "%" PRId64, sp->start_realtime_us);
	/* the state at t = 0 goes with the start: a running channel's is not the configured one */
	struct sq_log_record r = { .t = 0, .event = "start", .has_state = true,
				   .state = sq_model_channel_state(sp->model), .note = note };
	sq_event_log_write(&sp->log, &r);
	sq_model_advance(sp->model, 0);
	fprintf(stderr, "squall-emulator: run started (t = 0 at realtime %" PRId64 " us)\n",
		sp->start_realtime_us);
}

static void end_run(struct sp *sp, const char *reason, int exit_code)
{
	if (sp->state == RUN_ENDED)
		return;
	sp->end_reason = reason;
	sp->exit_code = exit_code;
	sp->state = RUN_ENDED;
}

static void on_hello(struct sp *sp, const struct sq_classified *c, const struct sq_datagram *d)
{
	uint8_t role = c->h.role;
	if (sq_peers_register(&sp->peers, role, d->src, d->src_len, mono_ns())) {
		char addr[80], note[96];
		sq_sockaddr_text(d->src, addr, sizeof(addr));
		snprintf(note, sizeof(note), "%s up %s", sq_role_name(role), addr);
		note_peer(sp, note);
	}
	/* One clock when the NPA runs on this kernel (same boot id) and the time it sent the HELLO
	 * reads as a moment of the last seconds on ours: then its DATA may carry TUN read times. */
	struct sq_peer *peer = &sp->peers.peer[role];
	peer->shared_clock = sp->has_boot_id && (c->h.flags & SQ_WIRE_FLAG_CLOCK)
			     && sq_wire_clock_offer_matches(c->payload, c->h.length, mono_ns(), sp->boot_id);
	/* The MTU of the direction this peer receives. */
	enum sq_dir receives = role == SQ_ROLE_MOBILE ? SQ_DOWN : SQ_UP;
	uint16_t mtu = (uint16_t)sp->cfg->link.dir[receives].mtu;
	uint8_t payload[2] = { (uint8_t)(mtu >> 8), (uint8_t)mtu };
	send_to_peer(sp, peer, SQ_MSG_WELCOME, peer->shared_clock ? SQ_WIRE_FLAG_CLOCK : 0, payload,
		     sizeof(payload));
	bool both = sp->peers.peer[SQ_ROLE_ROUTER].registered && sp->peers.peer[SQ_ROLE_MOBILE].registered;
	if (both && sp->cfg->autostart == SQ_AUTOSTART_PEERS && sp->state == RUN_WAITING)
		start_run(sp);
}

static void on_data(struct sp *sp, struct sq_classified *c)
{
	struct sq_packet *pkt = sq_pool_get(&sp->pool, c->h.length);
	if (!pkt) {
		fprintf(stderr, "squall-emulator: out of memory for a packet buffer; ending the run\n");
		end_run(sp, "out_of_memory", SQ_EXIT_RUNTIME);
		return;
	}
	memcpy(sq_packet_data(pkt), c->payload, c->h.length);
	pkt->id_text_len = (uint16_t)sq_log_identity_text(&c->id, pkt->id_text, sizeof(pkt->id_text));
	enum sq_dir dir = c->h.role == SQ_ROLE_ROUTER ? SQ_DOWN : SQ_UP;
	/* Every datagram of a receive batch had arrived when the batch was read; a stamped one
	 * arrived when its NPA read it from the TUN (arrival.h: clamped to keep the model's order). */
	enum sq_arrival_kind kind;
	sp->model_t = sq_arrival_time(c->stamped, c->stamp_ns, sp->rx_ns, sp->start_ns, sp->model_t, &kind);
	sp->arrivals[kind]++;
	if (sq_model_arrive(sp->model, dir, sp->model_t, &c->meta, pkt) == 0)
		sq_pool_put(&sp->pool, pkt);   /* the model had no memory for it: it never entered */
}

/* Who sent a START/STOP or a signal, for the trailer's end line. */
static void note_end_by(struct sp *sp, long pid, unsigned long uid, const char *comm)
{
	snprintf(sp->end_by, sizeof(sp->end_by), "by_pid %ld by_uid %lu by_comm %s", pid, uid, comm);
}

/* "state pending N last_us T now_us M": packets inside the link (router stage included), the
 * model time of the last packet in or out (-1: none) and now, for the runner's drain; before
 * START the times are -1. */
static void reply_state(struct sp *sp, int conn)
{
	char line[96];
	sq_time_us now = sp->state == RUN_WAITING ? -1 : model_now(sp);
	snprintf(line, sizeof(line), "state pending %zu last_us %" PRId64 " now_us %" PRId64 "\n",
		 sq_model_pending(sp->model), (int64_t)sp->last_in_out, (int64_t)now);
	sq_control_reply(sp->control, conn, line);
}

static void on_control(struct sp *sp)
{
	struct sq_control_request req;
	while (sp->state != RUN_ENDED && sq_control_next(sp->control, &req)) {
		char who[80];
		sq_control_peer_text(&req.peer, who, sizeof(who));
		if (req.command == SQ_CONTROL_STATE) {
			reply_state(sp, req.conn);
			continue;
		}
		if (req.command == SQ_CONTROL_START) {
			if (sp->state == RUN_WAITING)
				start_run(sp);
			char line[48];
			snprintf(line, sizeof(line), "started %" PRId64 "\n", sp->start_realtime_us);
			sq_control_reply(sp->control, req.conn, line);
			continue;
		}
		fprintf(stderr, "squall-emulator: STOP on the control socket from %s, ending the run\n", who);
		note_end_by(sp, (long)req.peer.pid, (unsigned long)req.peer.uid, req.peer.comm);
		sp->stop_conn = req.conn;
		end_run(sp, "stop", SQ_EXIT_OK);
	}
}

/* Refusals that mean someone with the run token tried to take over a role or the run: said
 * on stderr (the runner names them in the replication's reason), the first few of each. */
#define INTRUSIONS_SHOWN 8

static void report_intrusion(struct sp *sp, const struct sq_classified *c, const struct sq_datagram *d)
{
	uint64_t n = sp->rejected[c->reason];
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
	const struct sq_peer *p = &sp->peers.peer[c->h.role];
	sq_sockaddr_text((const struct sockaddr *)&p->addr, holder, sizeof(holder));
	fprintf(stderr, "squall-emulator: refused a HELLO for the %s role from %s: the %s NPA at %s is alive "
		"(counted as role_taken)%s\n", sq_role_name(c->h.role), from, sq_role_name(c->h.role), holder, more);
}

static void on_datagram(struct sp *sp, const struct sq_datagram *d)
{
	struct sq_classified c;
	sq_classify(&sp->peers, sp->cfg->token, sp->state == RUN_STARTED, d, &c);
	if (c.action == SQ_ACT_REJECT) {
		sp->rejected[c.reason]++;
		if (c.reason == SQ_REJ_ROLE_TAKEN || c.reason == SQ_REJ_UDP_CONTROL)
			report_intrusion(sp, &c, d);
		return;
	}
	if (c.action == SQ_ACT_DATA || c.action == SQ_ACT_KEEPALIVE || c.action == SQ_ACT_BYE)
		sp->peers.peer[c.h.role].last_rx_ns = sp->rx_ns;
	char note[32];
	switch (c.action) {
	case SQ_ACT_HELLO:
		on_hello(sp, &c, d);
		break;
	case SQ_ACT_DATA:
		on_data(sp, &c);
		break;
	case SQ_ACT_KEEPALIVE:
		send_to_peer(sp, &sp->peers.peer[c.h.role], SQ_MSG_KEEPALIVE, 0, NULL, 0);
		break;
	case SQ_ACT_BYE:
		sq_peers_unregister(&sp->peers, c.h.role);
		snprintf(note, sizeof(note), "%s bye", sq_role_name(c.h.role));
		note_peer(sp, note);
		break;
	case SQ_ACT_REJECT:
		break;
	}
}

/* --- housekeeping: keepalives and lost peers ----------------------------------------- */

static void check_peers(struct sp *sp, int64_t now)
{
	for (uint8_t role = SQ_ROLE_ROUTER; role <= SQ_ROLE_MOBILE; role++) {
		struct sq_peer *p = &sp->peers.peer[role];
		if (!p->registered)
			continue;
		if (now - p->last_rx_ns >= sp->cfg->peer_timeout * 1000) {
			char note[32];
			snprintf(note, sizeof(note), "%s lost", sq_role_name(role));
			note_peer(sp, note);
			sq_peers_unregister(&sp->peers, role);
			fprintf(stderr, "squall-emulator: the %s NPA sent nothing for %" PRId64
				" ms (peer_timeout): it is lost\n", sq_role_name(role), sp->cfg->peer_timeout / 1000);
			if (sp->state == RUN_STARTED)
				end_run(sp, role == SQ_ROLE_ROUTER ? "router_lost" : "mobile_lost", SQ_EXIT_PEER_LOST);
			continue;
		}
		if (now - p->last_tx_ns >= sp->cfg->keepalive * 1000)
			send_to_peer(sp, p, SQ_MSG_KEEPALIVE, 0, NULL, 0);
	}
}

static int64_t next_housekeeping_ns(const struct sp *sp)
{
	int64_t next = MAX_NS;
	for (uint8_t role = SQ_ROLE_ROUTER; role <= SQ_ROLE_MOBILE; role++) {
		const struct sq_peer *p = &sp->peers.peer[role];
		if (!p->registered)
			continue;
		int64_t lost = p->last_rx_ns + sp->cfg->peer_timeout * 1000;
		int64_t keep = p->last_tx_ns + sp->cfg->keepalive * 1000;
		next = lost < next ? lost : next;
		next = keep < next ? keep : next;
	}
	return next;
}

/* --- the loop ------------------------------------------------------------------------ */

/* The next model deadline; MAX_NS if none. */
static int64_t next_model_ns(const struct sp *sp)
{
	if (sp->state != RUN_STARTED)
		return MAX_NS;
	sq_time_us d = sq_model_next_deadline(sp->model);
	if (d == SQ_TIME_NEVER || d >= (MAX_NS - sp->start_ns) / 1000)
		return MAX_NS;
	return sp->start_ns + d * 1000;
}

/* When the next decided packet is to be sent ahead (release_ahead before its out); MAX_NS
 * if none. No early wakeup for it: it leaves well before it is needed. */
static int64_t next_ahead_ns(const struct sp *sp)
{
	int64_t next = MAX_NS;
	for (int d = 0; d < SQ_DIRS; d++) {
		if (!sends_ahead(sp, (enum sq_dir)d))
			continue;
		sq_time_us t = sq_send_ahead_next(&sp->ahead, sp->model, (enum sq_dir)d);
		if (t == SQ_TIME_NEVER || t >= (MAX_NS - sp->start_ns) / 1000)
			continue;
		int64_t at = sp->start_ns + (t - sp->cfg->release_ahead) * 1000;
		next = at < next ? at : next;
	}
	return next;
}

/* The next instant something is due: a model deadline, a packet to send ahead or
 * housekeeping; MAX_NS if none. */
static int64_t next_due_ns(const struct sp *sp)
{
	int64_t next = next_housekeeping_ns(sp), model = next_model_ns(sp), ahead = next_ahead_ns(sp);
	next = model < next ? model : next;
	return ahead < next ? ahead : next;
}

/* The wait until next for epoll_pwait2 (NULL: until an event). */
static const struct timespec *timeout_until(int64_t next, struct timespec *ts)
{
	if (next == MAX_NS)
		return NULL;
	int64_t wait = next - mono_ns();
	if (wait < 0)
		wait = 0;
	ts->tv_sec = wait / 1000000000;
	ts->tv_nsec = wait % 1000000000;
	return ts;
}

static void on_signal(struct sp *sp)
{
	struct signalfd_siginfo si;
	if (read(sp->signals, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	const char *name = si.ssi_signo == SIGINT ? "sigint" : si.ssi_signo == SIGHUP ? "sighup" : "sigterm";
	struct sq_control_peer from;
	sq_control_peer_of((pid_t)si.ssi_pid, (uid_t)si.ssi_uid, &from);
	char who[80];
	sq_control_peer_text(&from, who, sizeof(who));
	fprintf(stderr, "squall-emulator: %s received from %s, ending the run\n", name, who);
	note_end_by(sp, (long)from.pid, (unsigned long)from.uid, from.comm);
	end_run(sp, name, SQ_EXIT_OK);
}

static void on_socket(struct sp *sp)
{
	/* Drain everything queued, one batch at a time. */
	for (;;) {
		int64_t asked = mono_ns();
		int n = udp_batch_receive(sp->batch, sp->sock);
		sp->rx_ns = mono_ns();
		sp->lock_use.receive_ns += sp->rx_ns - asked;
		if (n <= 0)
			return;
		for (int i = 0; i < n && sp->state != RUN_ENDED; i++) {
			struct sq_datagram d;
			udp_batch_datagram(sp->batch, i, &d);
			on_datagram(sp, &d);
		}
		send_ahead(sp);
		flush_deliveries(sp);
		if (sp->state == RUN_ENDED || udp_batch_drained(sp->batch))
			return;
	}
}

/* Handles what is due: deliveries and other model events, keepalives and lost
 * peers. The loop sleeps in epoll_pwait2 until the next of them (no timer fd:
 * one system call less per wakeup). */
static void run_due(struct sp *sp)
{
	int64_t now = mono_ns();
	if (sp->state == RUN_STARTED) {
		sq_time_us due = sq_model_next_deadline(sp->model);
		if (due != SQ_TIME_NEVER && due <= (now - sp->start_ns) / 1000)
			sq_model_advance(sp->model, model_time_at(sp, now));
	}
	if (now >= next_housekeeping_ns(sp))
		check_peers(sp, now);
	send_ahead(sp);
	flush_deliveries(sp);
}

/* When the loop thread stops sleeping for the next due instant: EARLY_NS
 * before a model deadline, from where it polls (epoll with timeout 0) until the
 * deadline, so that a delivery waits for no wakeup at all. Fixed per deadline
 * when first seen, at most half the time until it: it never spins more than it
 * sleeps. Keepalives and peer checks need no such precision. */
static int64_t wake_at(struct sp *sp, int64_t next)
{
	if (next == MAX_NS || next != next_model_ns(sp))
		return next;
	int64_t now = mono_ns();
	if (next != sp->early_for) {
		sp->early_for = next;
		sp->early_ns = next - now < 2 * EARLY_NS ? (next - now) / 2 : EARLY_NS;
	}
	return next - sp->early_ns <= now ? 0 : next - sp->early_ns;
}

/* The standby's turn (standby.h): the loop thread is late; do what it would. */
static int64_t standby_take_over(void *ctx)
{
	struct sp *sp = ctx;
	if (sp->state != RUN_ENDED)
		on_socket(sp);     /* arrivals get their real time even while the loop thread is held up */
	run_due(sp);
	return sp->state == RUN_ENDED ? MAX_NS : next_due_ns(sp);
}

/* Waits for an event until `wake`; from there on (wake_at's early window) polls until
 * `next` is due, all without the lock: a CPU stopped while this thread polls holds up
 * nothing the standby could do. */
static int wait_unlocked(struct sp *sp, struct epoll_event *evs, int max, int64_t wake, int64_t next)
{
	static const struct timespec poll_only = { 0, 0 };
	struct timespec ts;
	int n = epoll_pwait2(sp->epoll, evs, max, timeout_until(wake, &ts), NULL);
	while (n == 0 && next != MAX_NS && mono_ns() < next)
		n = epoll_pwait2(sp->epoll, evs, max, &poll_only, NULL);
	return n;
}

/* Holds standby.lock except while it sleeps: the standby serves what falls due
 * while this thread cannot run (its CPU stopped, or busy with others). */
static bool loop(struct sp *sp, char *err, size_t errlen)
{
	bool ok = true;
	sq_standby_lock(&sp->standby);
	for (;;) {
		run_due(sp);
		if (sp->state == RUN_ENDED)
			break;
		struct epoll_event evs[3];
		int64_t next = next_due_ns(sp);
		int64_t wake = wake_at(sp, next);
		sq_standby_unlock(&sp->standby, next);
		int n = wait_unlocked(sp, evs, 3, wake, next);
		int error = errno;
		sq_standby_lock(&sp->standby);
		if (n < 0 && error != EINTR) {
			snprintf(err, errlen, "epoll_pwait2: %s", strerror(error));
			ok = false;
			break;
		}
		for (int i = 0; i < n && sp->state != RUN_ENDED; i++) {
			if (evs[i].data.fd == sp->signals)
				on_signal(sp);
			else if (sp->control && evs[i].data.fd == sq_control_fd(sp->control))
				on_control(sp);
			else
				on_socket(sp);   /* flushes its deliveries after each receive batch */
		}
		if (sp->state == RUN_ENDED)
			break;
	}
	sq_standby_unlock(&sp->standby, MAX_NS);
	return ok;
}

/* --- setup and teardown -------------------------------------------------------------- */

static bool add_to_epoll(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

static bool open_signals(struct sp *sp, char *err, size_t errlen)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* A closed stderr pipe must not kill the process before the log is complete. */
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (sp->signals = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		snprintf(err, errlen, "signalfd for SIGINT/SIGTERM/SIGHUP: %s", strerror(errno));
		return false;
	}
	return true;
}

static bool setup(struct sp *sp, char *err, size_t errlen)
{
	const struct sq_emu_config *cfg = sp->cfg;
	if (!cfg->control_path[0] && cfg->autostart != SQ_AUTOSTART_PEERS) {
		snprintf(err, errlen, "nothing could start the run: give the control socket (control = PATH or "
			 "--control PATH) or autostart = peers");
		return false;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sp->has_boot_id = sq_boot_id(sp->boot_id);
	sq_standby_init(&sp->standby, STANDBY_GRACE_NS, standby_take_over, sp);
	sp->model = sq_model_new(&cfg->link, on_model_event, sp, err, errlen);
	if (!sp->model)
		return false;
	sq_model_set_clone(sp->model, clone_packet, sp);
	uint32_t mtu = cfg->link.dir[SQ_DOWN].mtu > cfg->link.dir[SQ_UP].mtu ? cfg->link.dir[SQ_DOWN].mtu
										: cfg->link.dir[SQ_UP].mtu;
	sq_pool_init(&sp->pool, mtu);
	sq_lateness_init(&sp->lateness);
	if (!open_signals(sp, err, errlen))
		return false;
	sp->batch = udp_batch_new(BATCH, RECV_SIZE);
	sp->out = udp_send_batch_new(BATCH, true);
	if (!sp->batch || !sp->out) {
		snprintf(err, errlen, "out of memory for the receive buffers");
		return false;
	}
	sp->sock = udp_socket_open(&cfg->listen, cfg->listen_len, err, errlen);
	if (sp->sock < 0)
		return false;
	udp_socket_enable_gro(sp->sock);
	sp->epoll = epoll_create1(EPOLL_CLOEXEC);
	if (sp->epoll < 0 || !add_to_epoll(sp->epoll, sp->sock) || !add_to_epoll(sp->epoll, sp->signals)) {
		snprintf(err, errlen, "epoll setup: %s", strerror(errno));
		return false;
	}
	if (cfg->control_path[0]) {
		sp->control = sq_control_open(cfg->control_path, err, errlen);
		if (!sp->control || !add_to_epoll(sp->epoll, sq_control_fd(sp->control))) {
			if (sp->control)
				snprintf(err, errlen, "epoll setup: %s", strerror(errno));
			return false;
		}
	}
	if (!sq_event_log_open(&sp->log, cfg->log_path, err, errlen))
		return false;
	sp->open_ns = mono_ns();
	sp->open_realtime_us = clock_ns(CLOCK_REALTIME) / 1000;
	char where[80];
	udp_socket_local_text(sp->sock, where, sizeof(where));
	fprintf(stderr, "squall-emulator: listening on %s\n", where);
	return true;
}

/* The standby on another CPU, and the log's writer thread with it: the loop
 * thread's CPUs see neither. Without a second CPU the loop runs alone. */
static void start_standby(struct sp *sp)
{
	char err[160];
	if (!sq_standby_start(&sp->standby, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: note: %s\n", err);
		return;
	}
	if (!sq_log_writer_place(sp->log.writer, sp->standby.cpu))
		fprintf(stderr, "squall-emulator: note: cannot move the log writer to CPU %d\n", sp->standby.cpu);
}

static void collect_totals(struct sp *sp, struct sq_log_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->end_us = (mono_ns() - (sp->was_started ? sp->start_ns : sp->open_ns)) / 1000;
	for (int d = 0; d < SQ_DIRS; d++)
		for (int e = 0; e < SQ_EV_TYPES; e++)
			t->counters[d][e] = sq_model_count(sp->model, (enum sq_dir)d, (enum sq_event_type)e);
	t->pending = sq_model_pending(sp->model);
	memcpy(t->undeliverable, sp->undeliverable, sizeof(t->undeliverable));
	t->send_errors = sp->send_errors;
	memcpy(t->rejected, sp->rejected, sizeof(t->rejected));
	t->lateness = &sp->lateness;
	if (sp->log.writer)
		sq_log_writer_stats(sp->log.writer, &t->writer);
	t->standby_cpu = sp->standby.cpu;
	t->standby_takeovers = sp->standby.takeovers;
	t->lock_use = sp->lock_use;
	t->lock_use.held_ns = sp->standby.held_ns;
	memcpy(t->arrivals, sp->arrivals, sizeof(t->arrivals));
	memcpy(t->sent_ahead, sp->ahead.sent, sizeof(t->sent_ahead));
	t->end_reason = sp->end_reason ? sp->end_reason : "error";
	t->end_by = sp->end_by[0] ? sp->end_by : NULL;
	if (sp->control)
		t->control = *sq_control_counts(sp->control);
	for (int d = 0; d < SQ_DIRS; d++) {
		const struct sq_router_config *rc = &sp->cfg->link.dir[d].router;
		struct sq_router_totals *rt = &t->router[d];
		for (size_t c = 0; rc->enabled && c < rc->n_classes; c++) {
			if (!sq_model_router_stats(sp->model, (enum sq_dir)d, c, &rt->stats[rt->n]))
				continue;
			memcpy(rt->name[rt->n], rc->classes[c].name, SQ_ROUTER_NAME_MAX);
			rt->n++;
		}
	}
}

/* Writes the trailer and closes the log; false if the log is incomplete. */
static bool finish_log(struct sp *sp, char *err, size_t errlen)
{
	if (!sp->log.header_written)
		sq_event_log_header(&sp->log, sp->cfg, false, sp->open_ns, sp->open_realtime_us);
	struct sq_log_totals totals;
	collect_totals(sp, &totals);
	sq_event_log_trailer(&sp->log, &totals);
	bool ok = sq_event_log_close(&sp->log, err, errlen);
	fprintf(stderr, "squall-emulator: summary\n");
	sq_log_totals_print(stderr, &totals, "  ");
	return ok;
}

/* The BYEs tell the NPAs, the answer to the runner's STOP that the log is complete. */
static void say_goodbye(struct sp *sp)
{
	for (uint8_t role = SQ_ROLE_ROUTER; role <= SQ_ROLE_MOBILE; role++)
		if (sp->peers.peer[role].registered)
			send_to_peer(sp, &sp->peers.peer[role], SQ_MSG_BYE, 0, NULL, 0);
	if (sp->control && sp->stop_conn >= 0)
		sq_control_reply(sp->control, sp->stop_conn, "stopped\n");
}

static void teardown(struct sp *sp)
{
	if (sp->epoll >= 0)
		close(sp->epoll);
	if (sp->signals >= 0)
		close(sp->signals);
	if (sp->sock >= 0)
		close(sp->sock);
	sq_control_close(sp->control);
	sq_standby_destroy(&sp->standby);
	udp_batch_free(sp->batch);
	udp_send_batch_free(sp->out);
	sq_model_free(sp->model);
	sq_pool_destroy(&sp->pool);
}

int sq_sp_run(const struct sq_emu_config *cfg)
{
	struct sp *sp = calloc(1, sizeof(*sp));
	if (!sp) {
		fprintf(stderr, "squall-emulator: out of memory\n");
		return SQ_EXIT_RUNTIME;
	}
	sp->cfg = cfg;
	sp->sock = sp->signals = sp->epoll = -1;
	sp->stop_conn = -1;
	sp->last_in_out = -1;
	char err[512] = "";
	int code = SQ_EXIT_RUNTIME;
	if (!setup(sp, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: %s\n", err);
	} else {
		start_standby(sp);
		bool looped = loop(sp, err, sizeof(err));
		sq_standby_stop(&sp->standby);
		if (!looped) {
			fprintf(stderr, "squall-emulator: %s\n", err);
			sp->end_reason = "error";
		}
		bool logged = finish_log(sp, err, sizeof(err));
		if (!logged)
			fprintf(stderr, "squall-emulator: %s\n", err);
		say_goodbye(sp);
		code = !looped || !logged ? SQ_EXIT_RUNTIME : sp->exit_code;
	}
	if (sp->log.f) {
		char ignored[8];
		sq_event_log_close(&sp->log, ignored, sizeof(ignored));
	}
	teardown(sp);
	free(sp);
	return code;
}

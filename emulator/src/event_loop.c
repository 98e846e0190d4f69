#include "event_loop.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "boot_id.h"
#include "cell_config.h"
#include "emu_state.h"

#define RECV_SIZE (SQ_WIRE_MAX_DATAGRAM + 1)   /* one more byte reveals an oversized one */
/* The standby thread (standby.h) wakes at every deadline too, this much after
 * it, and serves it if the loop thread has not. 0: the first awake serves. */
#define STANDBY_GRACE_NS 0
/* The loop thread wakes this much before a delivery and polls until it is due
 * (never more than half the time it would otherwise sleep). */
#define EARLY_NS (50 * 1000)

/* The next model deadline; MAX_NS if none. */
static int64_t next_model_ns(const struct emu *emu)
{
	if (emu->state != RUN_STARTED)
		return MAX_NS;
	sq_time_us d = sq_model_next_deadline(emu->model);
	if (d == SQ_TIME_NEVER || d >= (MAX_NS - emu->start_ns) / 1000)
		return MAX_NS;
	return emu->start_ns + d * 1000;
}

/* When the next decided packet is to be sent ahead (release_ahead before its out); MAX_NS
 * if none. No early wakeup for it: it leaves well before it is needed. */
static int64_t next_ahead_ns(const struct emu *emu)
{
	int64_t next = MAX_NS;
	for (uint32_t h = 0; h < sq_model_hosts(emu->model); h++) {
		for (int d = 0; d < SQ_DIRS; d++) {
			if (!emu_sends_ahead(emu, h, (enum sq_dir)d))
				continue;
			sq_time_us t = sq_send_ahead_next(&emu->ahead, emu->model, h, (enum sq_dir)d);
			if (t == SQ_TIME_NEVER || t >= (MAX_NS - emu->start_ns) / 1000)
				continue;
			int64_t at = emu->start_ns + (t - emu->cfg->release_ahead) * 1000;
			next = at < next ? at : next;
		}
	}
	return next;
}

/* The next instant something is due: a model deadline, a packet to send ahead or
 * housekeeping; MAX_NS if none. */
static int64_t next_due_ns(const struct emu *emu)
{
	int64_t next = emu_next_housekeeping_ns(emu), model = next_model_ns(emu), ahead = next_ahead_ns(emu);
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

static void on_socket(struct emu *emu)
{
	/* Drain everything queued, one batch at a time. */
	for (;;) {
		int64_t asked = mono_ns();
		int n = udp_batch_receive(emu->batch, emu->sock);
		emu->rx_ns = mono_ns();
		emu->lock_use.receive_ns += emu->rx_ns - asked;
		if (n <= 0)
			return;
		for (int i = 0; i < n && emu->state != RUN_ENDED; i++) {
			struct sq_datagram d;
			udp_batch_datagram(emu->batch, i, &d);
			emu_on_datagram(emu, &d);
		}
		emu_send_ahead(emu);
		emu_flush_deliveries(emu);
		if (emu->state == RUN_ENDED || udp_batch_drained(emu->batch))
			return;
	}
}

/* Handles what is due: deliveries and other model events, keepalives and lost
 * peers. The loop sleeps in epoll_pwait2 until the next of them (no timer fd:
 * one system call less per wakeup). */
static void run_due(struct emu *emu)
{
	int64_t now = mono_ns();
	if (emu->state == RUN_STARTED) {
		sq_time_us due = sq_model_next_deadline(emu->model);
		if (due != SQ_TIME_NEVER && due <= (now - emu->start_ns) / 1000)
			sq_model_advance(emu->model, model_time_at(emu, now));
	}
	if (now >= emu_next_housekeeping_ns(emu))
		emu_check_peers(emu, now);
	emu_send_ahead(emu);
	emu_flush_deliveries(emu);
}

/* When the loop thread stops sleeping for the next due instant: EARLY_NS
 * before a model deadline, from where it polls (epoll with timeout 0) until the
 * deadline, so that a delivery waits for no wakeup at all. Fixed per deadline
 * when first seen, at most half the time until it: it never spins more than it
 * sleeps. Keepalives and peer checks need no such precision. */
static int64_t wake_at(struct emu *emu, int64_t next)
{
	if (next == MAX_NS || next != next_model_ns(emu))
		return next;
	int64_t now = mono_ns();
	if (next != emu->early_for) {
		emu->early_for = next;
		emu->early_ns = next - now < 2 * EARLY_NS ? (next - now) / 2 : EARLY_NS;
	}
	return next - emu->early_ns <= now ? 0 : next - emu->early_ns;
}

/* The standby's turn (standby.h): the loop thread is late; do what it would. */
static int64_t standby_take_over(void *ctx)
{
	struct emu *emu = ctx;
	if (emu->state != RUN_ENDED)
		on_socket(emu);     /* arrivals get their real time even while the loop thread is held up */
	run_due(emu);
	return emu->state == RUN_ENDED ? MAX_NS : next_due_ns(emu);
}

/* Waits for an event until `wake`; from there on (wake_at's early window) polls until
 * `next` is due, all without the lock: a CPU stopped while this thread polls holds up
 * nothing the standby could do. */
static int wait_unlocked(struct emu *emu, struct epoll_event *evs, int max, int64_t wake, int64_t next)
{
	static const struct timespec poll_only = { 0, 0 };
	struct timespec ts;
	int n = epoll_pwait2(emu->epoll, evs, max, timeout_until(wake, &ts), NULL);
	while (n == 0 && next != MAX_NS && mono_ns() < next)
		n = epoll_pwait2(emu->epoll, evs, max, &poll_only, NULL);
	return n;
}

/* Holds standby.lock except while it sleeps: the standby serves what falls due
 * while this thread cannot run (its CPU stopped, or busy with others). */
static bool loop(struct emu *emu, char *err, size_t errlen)
{
	bool ok = true;
	sq_standby_lock(&emu->standby);
	for (;;) {
		run_due(emu);
		if (emu->state == RUN_ENDED)
			break;
		struct epoll_event evs[3];
		int64_t next = next_due_ns(emu);
		int64_t wake = wake_at(emu, next);
		sq_standby_unlock(&emu->standby, next);
		int n = wait_unlocked(emu, evs, 3, wake, next);
		int error = errno;
		sq_standby_lock(&emu->standby);
		if (n < 0 && error != EINTR) {
			snprintf(err, errlen, "epoll_pwait2: %s", strerror(error));
			ok = false;
			break;
		}
		for (int i = 0; i < n && emu->state != RUN_ENDED; i++) {
			if (evs[i].data.fd == emu->signals)
				emu_on_signal(emu);
			else if (emu->control && evs[i].data.fd == sq_control_fd(emu->control))
				emu_on_control(emu);
			else
				on_socket(emu);   /* flushes its deliveries after each receive batch */
		}
		if (emu->state == RUN_ENDED)
			break;
	}
	sq_standby_unlock(&emu->standby, MAX_NS);
	return ok;
}

static bool add_to_epoll(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

static bool open_signals(struct emu *emu, char *err, size_t errlen)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* A closed stderr pipe must not kill the process before the log is complete. */
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (emu->signals = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		snprintf(err, errlen, "signalfd for SIGINT/SIGTERM/SIGHUP: %s", strerror(errno));
		return false;
	}
	return true;
}

/* The largest packet any host's direction carries: the pool's buffers hold it. */
static uint32_t largest_mtu(const struct sq_link_config *link)
{
	uint32_t mtu = 0;
	for (uint32_t h = 0; h < sq_cell_hosts(link); h++)
		for (int d = 0; d < SQ_DIRS; d++) {
			uint32_t m = sq_host_direction(link, h, (enum sq_dir)d).mtu;
			mtu = m > mtu ? m : mtu;
		}
	return mtu;
}

static bool setup(struct emu *emu, char *err, size_t errlen)
{
	const struct sq_emu_config *cfg = emu->cfg;
	if (!cfg->control_path[0] && cfg->autostart != SQ_AUTOSTART_PEERS) {
		snprintf(err, errlen, "nothing could start the run: give the control socket (control = PATH or "
			 "--control PATH) or autostart = peers");
		return false;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	emu->has_boot_id = sq_boot_id(emu->boot_id);
	sq_standby_init(&emu->standby, STANDBY_GRACE_NS, standby_take_over, emu);
	emu->model = sq_model_new(&cfg->link, emu_on_model_event, emu, err, errlen);
	if (!emu->model)
		return false;
	sq_model_set_clone(emu->model, emu_clone_packet, emu);
	emu->peers.hosts = sq_cell_hosts(&cfg->link);
	for (size_t h = 0; h < cfg->n_cell_addresses; h++)
		sq_cell_routes_set(&emu->routes, (uint32_t)h, cfg->cell_addresses[h].family, cfg->cell_addresses[h].addr);
	sq_pool_init(&emu->pool, largest_mtu(&cfg->link));
	sq_lateness_init(&emu->lateness);
	if (!open_signals(emu, err, errlen))
		return false;
	emu->batch = udp_batch_new(BATCH, RECV_SIZE);
	emu->out = udp_send_batch_new(BATCH, true);
	if (!emu->batch || !emu->out) {
		snprintf(err, errlen, "out of memory for the receive buffers");
		return false;
	}
	emu->sock = udp_socket_open(&cfg->listen, cfg->listen_len, err, errlen);
	if (emu->sock < 0)
		return false;
	udp_socket_enable_gro(emu->sock);
	emu->epoll = epoll_create1(EPOLL_CLOEXEC);
	if (emu->epoll < 0 || !add_to_epoll(emu->epoll, emu->sock) || !add_to_epoll(emu->epoll, emu->signals)) {
		snprintf(err, errlen, "epoll setup: %s", strerror(errno));
		return false;
	}
	if (cfg->control_path[0]) {
		emu->control = sq_control_open(cfg->control_path, err, errlen);
		if (!emu->control || !add_to_epoll(emu->epoll, sq_control_fd(emu->control))) {
			if (emu->control)
				snprintf(err, errlen, "epoll setup: %s", strerror(errno));
			return false;
		}
	}
	if (!sq_event_log_open(&emu->log, cfg->log_path, err, errlen))
		return false;
	emu->open_ns = mono_ns();
	emu->open_realtime_us = clock_ns(CLOCK_REALTIME) / 1000;
	char where[80];
	udp_socket_local_text(emu->sock, where, sizeof(where));
	fprintf(stderr, "squall-emulator: listening on %s\n", where);
	return true;
}

/* The standby on another CPU, and the log's writer thread with it: the loop
 * thread's CPUs see neither. Without a second CPU the loop runs alone. */
static void start_standby(struct emu *emu)
{
	char err[160];
	if (!sq_standby_start(&emu->standby, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: note: %s\n", err);
		return;
	}
	if (!sq_log_writer_place(emu->log.writer, emu->standby.cpu))
		fprintf(stderr, "squall-emulator: note: cannot move the log writer to CPU %d\n", emu->standby.cpu);
}

static void collect_totals(struct emu *emu, struct sq_log_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->end_us = (mono_ns() - (emu->was_started ? emu->start_ns : emu->open_ns)) / 1000;
	for (int d = 0; d < SQ_DIRS; d++)
		for (int e = 0; e < SQ_EV_TYPES; e++)
			t->counters[d][e] = sq_model_count(emu->model, (enum sq_dir)d, (enum sq_event_type)e);
	t->hosts = sq_model_hosts(emu->model);
	for (uint32_t h = 0; t->hosts > 1 && h < t->hosts; h++)
		for (int d = 0; d < SQ_DIRS; d++)
			for (int e = 0; e < SQ_EV_TYPES; e++)
				t->host_counters[h][d][e] = sq_model_host_count(emu->model, h, (enum sq_dir)d,
										(enum sq_event_type)e);
	t->pending = sq_model_pending(emu->model);
	memcpy(t->undeliverable, emu->undeliverable, sizeof(t->undeliverable));
	t->send_errors = emu->send_errors;
	memcpy(t->rejected, emu->rejected, sizeof(t->rejected));
	t->lateness = &emu->lateness;
	if (emu->log.writer)
		sq_log_writer_stats(emu->log.writer, &t->writer);
	t->standby_cpu = emu->standby.cpu;
	t->standby_takeovers = emu->standby.takeovers;
	t->lock_use = emu->lock_use;
	t->lock_use.held_ns = emu->standby.held_ns;
	memcpy(t->arrivals, emu->arrivals, sizeof(t->arrivals));
	memcpy(t->sent_ahead, emu->ahead.sent, sizeof(t->sent_ahead));
	t->end_reason = emu->end_reason ? emu->end_reason : "error";
	t->end_by = emu->end_by[0] ? emu->end_by : NULL;
	if (emu->control)
		t->control = *sq_control_counts(emu->control);
	for (int d = 0; d < SQ_DIRS; d++) {
		const struct sq_router_config *rc = &emu->cfg->link.dir[d].router;
		struct sq_router_totals *rt = &t->router[d];
		for (size_t c = 0; rc->enabled && c < rc->n_classes; c++) {
			if (!sq_model_router_stats(emu->model, (enum sq_dir)d, c, &rt->stats[rt->n]))
				continue;
			memcpy(rt->name[rt->n], rc->classes[c].name, SQ_ROUTER_NAME_MAX);
			rt->n++;
		}
	}
}

/* Writes the trailer and closes the log; false if the log is incomplete. */
static bool finish_log(struct emu *emu, char *err, size_t errlen)
{
	if (!emu->log.header_written)
		sq_event_log_header(&emu->log, emu->cfg, false, emu->open_ns, emu->open_realtime_us);
	struct sq_log_totals totals;
	collect_totals(emu, &totals);
	sq_event_log_trailer(&emu->log, &totals);
	bool ok = sq_event_log_close(&emu->log, err, errlen);
	fprintf(stderr, "squall-emulator: summary\n");
	sq_log_totals_print(stderr, &totals, "  ");
	return ok;
}

/* The BYEs tell the NPAs, the answer to the runner's STOP that the log is complete. */
static void say_goodbye(struct emu *emu)
{
	for (uint8_t slot = SQ_ROLE_ROUTER; slot <= sq_peers_last_slot(&emu->peers); slot++)
		if (emu->peers.peer[slot].registered)
			emu_send_to_peer(emu, &emu->peers.peer[slot], SQ_MSG_BYE, 0, NULL, 0);
	if (emu->control && emu->stop_conn >= 0)
		sq_control_reply(emu->control, emu->stop_conn, "stopped\n");
}

static void teardown(struct emu *emu)
{
	if (emu->epoll >= 0)
		close(emu->epoll);
	if (emu->signals >= 0)
		close(emu->signals);
	if (emu->sock >= 0)
		close(emu->sock);
	sq_control_close(emu->control);
	sq_standby_destroy(&emu->standby);
	udp_batch_free(emu->batch);
	udp_send_batch_free(emu->out);
	sq_model_free(emu->model);
	sq_pool_destroy(&emu->pool);
}

int sq_event_loop_run(const struct sq_emu_config *cfg)
{
	struct emu *emu = calloc(1, sizeof(*emu));
	if (!emu) {
		fprintf(stderr, "squall-emulator: out of memory\n");
		return SQ_EXIT_RUNTIME;
	}
	emu->cfg = cfg;
	emu->sock = emu->signals = emu->epoll = -1;
	emu->stop_conn = -1;
	emu->last_in_out = -1;
	char err[512] = "";
	int code = SQ_EXIT_RUNTIME;
	if (!setup(emu, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: %s\n", err);
	} else {
		start_standby(emu);
		bool looped = loop(emu, err, sizeof(err));
		sq_standby_stop(&emu->standby);
		if (!looped) {
			fprintf(stderr, "squall-emulator: %s\n", err);
			emu->end_reason = "error";
		}
		bool logged = finish_log(emu, err, sizeof(err));
		if (!logged)
			fprintf(stderr, "squall-emulator: %s\n", err);
		say_goodbye(emu);
		code = !looped || !logged ? SQ_EXIT_RUNTIME : emu->exit_code;
	}
	if (emu->log.f) {
		char ignored[8];
		sq_event_log_close(&emu->log, ignored, sizeof(ignored));
	}
	teardown(emu);
	free(emu);
	return code;
}

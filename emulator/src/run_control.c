/* Run control (emulator/PROTOCOL.md, "Run control"): START (t = 0, the log's header), STOP
 * and STATE on the control socket, and the signals that end a run; who ended it goes into the
 * log's trailer. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "emu_state.h"

void emu_start_run(struct emu *emu)
{
	emu->start_ns = mono_ns();
	emu->model_t = 0;
	emu->last_in_out = -1;
	emu->start_realtime_us = clock_ns(CLOCK_REALTIME) / 1000;
	emu->state = RUN_STARTED;
	emu->was_started = true;
	sq_event_log_header(&emu->log, emu->cfg, true, emu->start_ns, emu->start_realtime_us);
	char note[32];
	snprintf(note, sizeof(note), "%" PRId64, emu->start_realtime_us);
	/* the state at t = 0 goes with the start: a running channel's is not the configured one */
	struct sq_log_record r = { .t = 0, .event = "start", .has_state = true,
				   .state = sq_model_channel_state(emu->model), .note = note };
	sq_event_log_write(&emu->log, &r);
	sq_model_advance(emu->model, 0);
	fprintf(stderr, "squall-emulator: run started (t = 0 at realtime %" PRId64 " us)\n",
		emu->start_realtime_us);
}

void emu_end_run(struct emu *emu, const char *reason, int exit_code)
{
	if (emu->state == RUN_ENDED)
		return;
	emu->end_reason = reason;
	emu->exit_code = exit_code;
	emu->state = RUN_ENDED;
}

/* Who sent a START/STOP or a signal, for the trailer's end line. */
static void note_end_by(struct emu *emu, long pid, unsigned long uid, const char *comm)
{
	snprintf(emu->end_by, sizeof(emu->end_by), "by_pid %ld by_uid %lu by_comm %s", pid, uid, comm);
}

/* "state pending N last_us T now_us M": packets inside the link (router stage included), the
 * model time of the last packet in or out (-1: none) and now, for the runner's drain; before
 * START the times are -1. */
static void reply_state(struct emu *emu, int conn)
{
	char line[96];
	sq_time_us now = emu->state == RUN_WAITING ? -1 : model_now(emu);
	snprintf(line, sizeof(line), "state pending %zu last_us %" PRId64 " now_us %" PRId64 "\n",
		 sq_model_pending(emu->model), (int64_t)emu->last_in_out, (int64_t)now);
	sq_control_reply(emu->control, conn, line);
}

void emu_on_control(struct emu *emu)
{
	struct sq_control_request req;
	while (emu->state != RUN_ENDED && sq_control_next(emu->control, &req)) {
		char who[80];
		sq_control_peer_text(&req.peer, who, sizeof(who));
		if (req.command == SQ_CONTROL_STATE) {
			reply_state(emu, req.conn);
			continue;
		}
		if (req.command == SQ_CONTROL_START) {
			if (emu->state == RUN_WAITING)
				emu_start_run(emu);
			char line[48];
			snprintf(line, sizeof(line), "started %" PRId64 "\n", emu->start_realtime_us);
			sq_control_reply(emu->control, req.conn, line);
			continue;
		}
		fprintf(stderr, "squall-emulator: STOP on the control socket from %s, ending the run\n", who);
		note_end_by(emu, (long)req.peer.pid, (unsigned long)req.peer.uid, req.peer.comm);
		emu->stop_conn = req.conn;
		emu_end_run(emu, "stop", SQ_EXIT_OK);
	}
}

void emu_on_signal(struct emu *emu)
{
	struct signalfd_siginfo si;
	if (read(emu->signals, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	const char *name = si.ssi_signo == SIGINT ? "sigint" : si.ssi_signo == SIGHUP ? "sighup" : "sigterm";
	struct sq_control_peer from;
	sq_control_peer_of((pid_t)si.ssi_pid, (uid_t)si.ssi_uid, &from);
	char who[80];
	sq_control_peer_text(&from, who, sizeof(who));
	fprintf(stderr, "squall-emulator: %s received from %s, ending the run\n", name, who);
	note_end_by(emu, (long)from.pid, (unsigned long)from.uid, from.comm);
	emu_end_run(emu, name, SQ_EXIT_OK);
}

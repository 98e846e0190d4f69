/* The state of one emulator run, shared by the files of its event loop: event_loop.c (the
 * loop, its timing, setup and teardown), peer_messages.c (the NPAs' datagrams, keepalives and
 * lost peers), outgoing.c (what goes to the NPAs: deliveries, packets sent ahead, control
 * messages) and run_control.c (START, STOP, STATE and signals). Not an interface for others:
 * main.c sees only event_loop.h. */
#ifndef SQ_EMU_STATE_H
#define SQ_EMU_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "arrival.h"
#include "cell_routes.h"
#include "clock_ns.h"
#include "config.h"
#include "control_socket.h"
#include "event_log.h"
#include "exit_codes.h"
#include "lateness.h"
#include "link_model.h"
#include "packet_pool.h"
#include "peers.h"
#include "send_ahead.h"
#include "standby.h"
#include "udp_socket.h"

#define BATCH 32
#define MAX_NS INT64_MAX

enum run_state { RUN_WAITING, RUN_STARTED, RUN_ENDED };

struct emu {
	const struct sq_emu_config *cfg;
	int sock, signals, epoll;
	struct sq_model *model;
	struct sq_packet_pool pool;
	struct sq_peers peers;
	struct sq_cell_routes routes;          /* a cell's hosts' addresses, learned from uplink */
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

/* The model time of the instant now_ns; never earlier than a time the model
 * already had (a batch's receive time may precede a later event's). */
static inline sq_time_us model_time_at(struct emu *emu, int64_t now_ns)
{
	sq_time_us t = (now_ns - emu->start_ns) / 1000;
	if (t < emu->model_t)
		t = emu->model_t;
	emu->model_t = t;
	return t;
}

static inline sq_time_us model_now(struct emu *emu)
{
	return model_time_at(emu, mono_ns());
}

/* outgoing.c */
void emu_send_to_peer(struct emu *emu, struct sq_peer *peer, uint8_t type, uint8_t flags, const void *payload,
		      uint16_t len);
void emu_flush_deliveries(struct emu *emu);
bool emu_sends_ahead(const struct emu *emu, uint32_t host, enum sq_dir dir);
void emu_send_ahead(struct emu *emu);
void emu_on_model_event(void *ctx, const struct sq_event *ev);
void *emu_clone_packet(void *ctx, void *user);

/* peer_messages.c */
void emu_on_datagram(struct emu *emu, const struct sq_datagram *d);
void emu_check_peers(struct emu *emu, int64_t now);
int64_t emu_next_housekeeping_ns(const struct emu *emu);

/* run_control.c */
void emu_start_run(struct emu *emu);
void emu_end_run(struct emu *emu, const char *reason, int exit_code);
void emu_on_control(struct emu *emu);
void emu_on_signal(struct emu *emu);

#endif

/* The event log file (emulator/LOG_FORMAT.md): header, event lines, trailer.
 * Buffered; `peer` events before the start are kept in memory and written
 * after the header with times relative to t = 0 (negative). */
#ifndef SQ_EVENT_LOG_H
#define SQ_EVENT_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arrival.h"
#include "config.h"
#include "control_socket.h"
#include "lateness.h"
#include "log_line.h"
#include "log_writer.h"
#include "peers.h"

struct sq_prestart_event {
	int64_t mono_ns;
	char note[96];
};

struct sq_event_log {
	FILE *f;
	struct sq_log_writer *writer;        /* f's writer thread (its statistics) */
	char *buffer;                        /* stdio buffer */
	bool header_written;
	struct sq_prestart_event *pre;
	size_t pre_len, pre_cap;
	bool write_failed;
	bool cell;                           /* a cell of several hosts: lines carry the host */
};

/* Per class of a direction's router stage (n == 0: no router stage). */
struct sq_router_totals {
	size_t n;
	char name[SQ_ROUTER_MAX_CLASSES][SQ_ROUTER_NAME_MAX];
	struct sq_router_class_stats stats[SQ_ROUTER_MAX_CLASSES];
};

/* The time the delivery threads held their shared lock (standby.h), the system calls made
 * holding it included: a CPU stopped in there stops both threads' deliveries. */
struct sq_lock_use {
	uint64_t held_ns, receive_ns, send_ns;
};

/* The counts the trailer reports. */
struct sq_log_totals {
	sq_time_us end_us;
	uint64_t counters[SQ_DIRS][SQ_EV_TYPES];
	uint32_t hosts;                      /* of the cell (1: no per-host counters) */
	uint64_t host_counters[SQ_CELL_MAX_HOSTS][SQ_DIRS][SQ_EV_TYPES];
	uint64_t pending;
	uint64_t undeliverable[SQ_DIRS];
	uint64_t send_errors;
	uint64_t rejected[SQ_REJECT_REASONS];
	const struct sq_lateness *lateness;
	struct sq_log_writer_stats writer;
	int standby_cpu;                     /* -1: no standby delivery thread */
	uint64_t standby_takeovers;
	struct sq_lock_use lock_use;
	uint64_t arrivals[SQ_ARRIVAL_KINDS]; /* how the arrival times were chosen (arrival.h) */
	uint64_t sent_ahead[SQ_DIRS];        /* sent before their out (release_ahead): not in lateness */
	const char *end_reason;
	const char *end_by;                  /* "by_pid P by_uid U by_comm C" or NULL */
	struct sq_control_counts control;    /* commands on the control socket */
	struct sq_router_totals router[SQ_DIRS];
};

bool sq_event_log_open(struct sq_event_log *log, const char *path, char *err, size_t errlen);

/* A `peer` event before the header is written. */
void sq_event_log_prestart(struct sq_event_log *log, int64_t mono_ns, const char *note);

/* Writes the header and the buffered pre-start events (times relative to
 * origin_ns, the CLOCK_MONOTONIC of t = 0). */
void sq_event_log_header(struct sq_event_log *log, const struct sq_emu_config *cfg, bool started,
			 int64_t origin_ns, int64_t origin_realtime_us);

void sq_event_log_write(struct sq_event_log *log, const struct sq_log_record *r);

void sq_event_log_trailer(struct sq_event_log *log, const struct sq_log_totals *t);

/* Writes the trailer's text to any stream (the exit summary uses the same counts). */
void sq_log_totals_print(FILE *out, const struct sq_log_totals *t, const char *prefix);

/* Flushes and closes; false if anything could not be written. */
bool sq_event_log_close(struct sq_event_log *log, char *err, size_t errlen);

#endif

/* Link configuration: the plain data the link model is built from.
 *
 * All times are integer microseconds, rates bit/s, sizes bytes. The config file
 * parser (emulator/src/config_file.c) fills this; unit tests fill it directly.
 */
#ifndef SQ_LINK_CONFIG_H
#define SQ_LINK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t sq_time_us;   /* microseconds since the run's t = 0 */

#define SQ_TIME_NEVER INT64_MAX

enum sq_dir { SQ_DOWN = 0, SQ_UP = 1 };   /* down = towards the mobile host */
#define SQ_DIRS 2

enum sq_state { SQ_GOOD = 0, SQ_BAD = 1 };
#define SQ_STATES 2

enum sq_dist_kind {
	SQ_DIST_FIXED,        /* a */
	SQ_DIST_UNIFORM,      /* [a, b] */
	SQ_DIST_EXPONENTIAL,  /* mean a; truncated to [min, max] when truncated */
};

struct sq_dist {
	enum sq_dist_kind kind;
	sq_time_us a, b;
	bool truncated;
	sq_time_us min, max;
};

/* One (state, duration) step of a user trace; a trace replays cyclically. */
struct sq_trace_step {
	enum sq_state state;
	sq_time_us duration;
};

struct sq_channel_config {
	enum sq_state initial_state;
	struct sq_dist length[SQ_STATES];     /* state length distributions */
	const struct sq_trace_step *trace;    /* non-NULL: use the trace instead */
	size_t trace_len;
};

/* Piecewise-constant bandwidth: rate_bps applies from at_us until the next step.
 * steps[0].at_us == 0. rate_bps == 0 means no transmission (an outage). */
struct sq_rate_step {
	sq_time_us at_us;
	uint64_t rate_bps;
};

#define SQ_RATE_UNLIMITED UINT64_MAX   /* serialisation takes no time */

struct sq_direction_config {
	uint32_t mtu;                  /* larger packets are dropped (drop_mtu) */
	uint32_t send_buffer;          /* bytes */
	uint32_t recv_buffer;          /* bytes; the in-order window (see LINK_MODEL.md) */
	uint32_t overhead;             /* bytes added per packet for serialisation */
	const struct sq_rate_step *rate;
	size_t rate_len;               /* >= 1 */
	sq_time_us delay;              /* propagation delay */
	double error[SQ_STATES];       /* frame error probability per channel state */
	uint32_t arq_retransmissions;  /* retries after the first attempt */
	sq_time_us arq_delay;          /* added per retry */
	bool in_order;
};

struct sq_link_config {
	struct sq_channel_config channel;
	struct sq_direction_config dir[SQ_DIRS];
	uint64_t seed;
	uint32_t replication;
};

#endif

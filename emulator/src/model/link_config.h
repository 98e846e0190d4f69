/* Link configuration: the plain data the link model is built from.
 *
 * All times are integer microseconds, rates bit/s, sizes bytes. The config file
 * parser (emulator/src/config/config_file.c) fills this; unit tests fill it directly.
 */
#ifndef SQ_LINK_CONFIG_H
#define SQ_LINK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netem_config.h"

#define SQ_MAX_DELAY_US 1000000000000LL     /* delay and arq_delay: about 11.6 days */

typedef int64_t sq_time_us;   /* microseconds since the run's t = 0 */

#define SQ_TIME_NEVER INT64_MAX

enum sq_dir { SQ_DOWN = 0, SQ_UP = 1 };   /* down = towards the mobile host */
#define SQ_DIRS 2

enum sq_state { SQ_GOOD = 0, SQ_BAD = 1 };
#define SQ_STATES 2

const char *sq_dir_name(enum sq_dir dir);             /* "down", "up" */
const char *sq_state_name(enum sq_state state);       /* "good", "bad" */

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

/* Where the timeline is at t = 0: at the start of an `initial_state` period, or at a
 * random point of a long run of the channel (LINK_MODEL.md "A running channel"). */
enum sq_channel_start { SQ_START_FRESH = 0, SQ_START_RUNNING = 1 };

/* How an attempt's frame error is drawn (LINK_MODEL.md "Random numbers"): the next number
 * of the direction's stream (Seawind), or a function of the attempt's start time on a
 * grid, so that variants transmitting at the same moment meet the same error. */
enum sq_error_draws { SQ_ERROR_DRAWS_PER_FRAME = 0, SQ_ERROR_DRAWS_BY_TIME = 1 };

struct sq_channel_config {
	enum sq_state initial_state;
	enum sq_channel_start start;
	struct sq_dist length[SQ_STATES];     /* state length distributions */
	const struct sq_trace_step *trace;    /* non-NULL: use the trace instead */
	size_t trace_len;
	enum sq_error_draws error_draws;      /* per frame (0, the Seawind mode) or by time */
	sq_time_us error_grid;                /* by time: the grid's step (>= 1 us) */
};

/* An outage process (LINK_MODEL.md "Outages"): from t = 0, periods without an outage of
 * length `every` and outages of length `length` alternate, drawn like the channel's state
 * lengths. enabled = false (the all-zero value): no outages. */
struct sq_outage_config {
	bool enabled;
	struct sq_dist every, length;
};

/* Piecewise-constant bandwidth: rate_bps applies from at_us until the next step.
 * steps[0].at_us == 0. rate_bps == 0 means no transmission (an outage). */
struct sq_rate_step {
	sq_time_us at_us;
	uint64_t rate_bps;
};

#define SQ_RATE_UNLIMITED UINT64_MAX   /* serialisation takes no time */

/* A recorded capacity trace in mahimahi's format (LINK_MODEL.md "Recorded capacity
 * traces"): one delivery opportunity at each ms[i] milliseconds after t = 0, ms
 * non-decreasing, the last > 0 (the trace's period; it repeats for ever). len = 0: none. */
struct sq_opportunity_trace {
	const uint32_t *ms;
	size_t len;
};

/* ---- the router stage (optional, per direction; LINK_MODEL.md "The router stage") ---- */

#define SQ_ROUTER_MAX_CLASSES 16
#define SQ_ROUTER_MAX_FILTERS 32
#define SQ_ROUTER_NAME_MAX 32          /* class and filter names, NUL included */
#define SQ_ROUTER_NO_CLASS 255         /* sq_event.router_class when not classified */
#define SQ_ROUTER_MAX_DEVICE_QUEUE 65536   /* packets */

enum sq_router_scheduler {
	SQ_ROUTER_PRIORITY = 0,   /* strict priority, lower number first */
	SQ_ROUTER_WEIGHTED = 1,   /* deficit round robin, quanta proportional to share_bps */
};

/* A class's queue discipline: the index of its row in router_table.def (pfifo: tail
 * drop in packets; bfifo: tail drop in bytes; red: Random Early Detection, byte mode, ...). */
enum sq_qdisc {
#define SQ_DISCIPLINE(ENUM, name) SQ_QDISC_##ENUM,
#include "router_table.def"
#undef SQ_DISCIPLINE
	SQ_QDISCS   /* how many there are */
};

struct sq_red_config {
	uint32_t limit;   /* bytes: hard tail drop */
	uint32_t min;     /* bytes: thresholds on the average queue */
	uint32_t max;
	uint32_t avpkt;   /* bytes: the idle-time correction counts avpkt transmissions */
	double max_p;     /* (0, 1]: drop/mark probability at avg = max */
	double w_q;       /* (0, 1]: weight of the average */
	bool ecn;         /* mark ECN-capable packets instead of dropping them */
};

struct sq_codel_config {
	sq_time_us target;     /* µs: acceptable standing queue delay (5 ms) */
	sq_time_us interval;   /* µs: the window of the sliding minimum (100 ms) */
	bool ecn;              /* mark ECN-capable packets instead of dropping them */
	sq_time_us ce_threshold;   /* µs: mark ECN-capable packets that waited longer; 0: off */
};

struct sq_fq_codel_config {   /* FQ-CoDel (RFC 8290, Linux sch_fq_codel): LINK_MODEL.md "FQ-CoDel" */
	sq_time_us target;     /* µs: each flow's CoDel target (5 ms) */
	sq_time_us interval;   /* µs: and interval (100 ms) */
	bool ecn;              /* mark ECN-capable packets instead of dropping them (true) */
	uint32_t quantum;      /* IP bytes a flow may send per turn (1514) */
	uint32_t flows;        /* hash buckets (1024) */
};

struct sq_pie_config {   /* PIE (RFC 8033, Linux sch_pie): LINK_MODEL.md "PIE" */
	sq_time_us target;    /* µs > 0: the queue delay it steers to (15 ms) */
	sq_time_us tupdate;   /* µs > 0: the probability's update interval (15 ms) */
	double alpha;       /* [0, 2]: per second of delay above target (0.125) */
	double beta;        /* [0, 2]: per second of delay growth since the last update (1.25) */
	bool ecn;           /* mark ECN-capable packets while the probability is <= 10 % */
	bool bytemode;      /* scale the probability by packet size / MTU */
};

struct sq_dualpi2_config {   /* DualPI2 (RFC 9332, Linux sch_dualpi2): LINK_MODEL.md "DualPI2" */
	sq_time_us target;    /* µs > 0: the PI2 controller's delay target (15 ms) */
	sq_time_us tupdate;   /* µs > 0: its update interval (16 ms) */
	double alpha, beta;   /* > 0: its gains in Hz (41/256, 819/256) */
	double coupling;      /* k >= 1: L4S mark probability k p' (2) */
	sq_time_us step_thresh;   /* µs > 0: the L queue's step threshold on the sojourn time (1 ms) */
	double c_protection;  /* [0, 100]: the C queue's WRR weight, percent (10) */
	bool overflow;        /* on overload (k p' > 1) L4S packets are marked, never dropped */
};

struct sq_router_class {
	char name[SQ_ROUTER_NAME_MAX];
	uint8_t priority;          /* SQ_ROUTER_PRIORITY: 0 is served first */
	uint64_t share_bps;        /* SQ_ROUTER_WEIGHTED: rate share (> 0) */
	enum sq_qdisc discipline;
	uint32_t limit;            /* packets or bytes (the discipline's limit_in_bytes); RED uses red.limit */
	struct sq_red_config red;
	struct sq_codel_config codel;
	struct sq_fq_codel_config fq_codel;
	struct sq_pie_config pie;
	struct sq_dualpi2_config dualpi2;
};

/* All given fields must match (AND); a packet goes to the class of the first
 * matching filter, in array order, else to the default class. */
struct sq_router_filter {
	char name[SQ_ROUTER_NAME_MAX];   /* for messages; may be empty */
	size_t class_index;
	uint64_t dscp_mask;              /* bit d set: DSCP d matches; 0: any DSCP */
	bool match_proto;
	uint8_t proto;                   /* IP protocol number */
	bool match_sport, match_dport;   /* need match_proto */
	uint16_t sport_min, sport_max;   /* inclusive ranges */
	uint16_t dport_min, dport_max;
};

struct sq_router_config {
	bool enabled;                    /* false: no router stage (all zero is disabled) */
	enum sq_router_scheduler scheduler;
	struct sq_router_class classes[SQ_ROUTER_MAX_CLASSES];
	size_t n_classes;                /* >= 1 when enabled */
	size_t default_class;
	struct sq_router_filter filters[SQ_ROUTER_MAX_FILTERS];
	size_t n_filters;
	uint32_t device_queue;           /* packets between the class queues and the send buffer
					  * (a device's queue, like the 2.4 tun read queue); 0: none,
					  * the class queues feed the send buffer directly */
};

struct sq_direction_config {
	uint32_t mtu;                  /* larger packets are dropped (drop_mtu) */
	uint32_t send_buffer;          /* bytes */
	uint32_t recv_buffer;          /* bytes; the in-order window (see LINK_MODEL.md) */
	uint32_t overhead;             /* bytes added per packet for serialisation */
	const struct sq_rate_step *rate;
	size_t rate_len;               /* >= 1 */
	struct sq_opportunity_trace capacity;  /* len > 0: serialise over this trace, not rate */
	sq_time_us delay;              /* propagation delay */
	double error[SQ_STATES];       /* frame error probability per channel state */
	uint32_t arq_retransmissions;  /* retries after the first attempt */
	sq_time_us arq_delay;          /* added per retry */
	bool in_order;
	struct sq_router_config router;  /* in front of the send buffer */
	struct sq_outage_config outages; /* enabled: this direction's own outages instead of the link's */
	struct sq_netem_config netem;    /* netem's per-packet models; all zero: none */
};

/* ---- a cell of several hosts (LINK_MODEL.md "A cell of several hosts") ---- */

#define SQ_CELL_MAX_HOSTS 16
#define SQ_CELL_DEFAULT_PF_WINDOW 100u     /* frames */
#define SQ_CELL_MAX_PF_WINDOW 1000000u     /* frames */

/* Which host's send buffer the direction's one transmitter serves next. */
enum sq_cell_scheduler {
	SQ_CELL_ROUND_ROBIN = 0,        /* the next ready host after the last one served */
	SQ_CELL_PROPORTIONAL_FAIR = 1,  /* the ready host maximising success / average */
};

/* What a host has of its own: its channel, outages and, per direction, everything but the
 * cell's capacity (a direction's rate, capacity trace and overhead are cfg->dir[]'s; the
 * same fields here are not read) and the router stage (the cell's, in front). */
struct sq_host_config {
	struct sq_channel_config channel;
	struct sq_direction_config dir[SQ_DIRS];
	struct sq_outage_config outages;
};

struct sq_cell_config {
	uint32_t hosts;                      /* 0 or 1: a link of one host, as without a cell */
	enum sq_cell_scheduler scheduler;
	uint32_t pf_window;                  /* frames: proportional fair's averaging window W
					      * (0: SQ_CELL_DEFAULT_PF_WINDOW) */
	const struct sq_host_config *host;   /* `hosts` entries (host 1 first), or NULL: every
					      * host has the link's own channel and directions */
};

struct sq_link_config {
	struct sq_channel_config channel;
	struct sq_direction_config dir[SQ_DIRS];
	struct sq_outage_config outages; /* of both directions at once, unless one has its own */
	uint64_t seed;
	uint32_t replication;
	struct sq_cell_config cell;      /* all zero: one host */
};

#endif

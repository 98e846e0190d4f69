/* The link model: a pure state machine with no I/O and no clock of its own.
 *
 * Inputs:  sq_model_arrive()  — a packet enters the link at time now
 *          sq_model_advance() — time has reached now
 * Outputs: events, reported in non-decreasing time order through the sink given
 *          at creation. An SQ_EV_OUT event means "hand this packet to the other
 *          NPA at ev->t"; an SQ_EV_DROP_* event means the packet is gone. Either
 *          way the model forgets the packet and the caller may free it.
 *
 * The caller must never go back in time: every now passed in must be >= the
 * previous one. sq_model_next_deadline() says when the model next needs
 * sq_model_advance() (a delivery, a transmission end, an ARQ retry, a channel
 * state change; bandwidth steps are folded into transmission end times).
 *
 * Semantics are specified in emulator/LINK_MODEL.md.
 */
#ifndef SQ_LINK_MODEL_H
#define SQ_LINK_MODEL_H

#include "decided_out.h"
#include "link_config.h"
#include "pkt_meta.h"
#include "router_stats.h"

enum sq_event_type {
	SQ_EV_IN,          /* packet entered the link */
	SQ_EV_ENQUEUE,     /* placed in the send buffer */
	SQ_EV_DROP_MTU,
	SQ_EV_DROP_SBUF,
	SQ_EV_DROP_ROUTER,
	SQ_EV_ECN_MARK,
	SQ_EV_TX,          /* transmission attempt starts (attempt 0 = first) */
	SQ_EV_HIT,         /* that attempt was hit by a frame error */
	SQ_EV_DROP_ERR,    /* hit after the last retry */
	SQ_EV_RECV,        /* arrived at the receiving end of the link */
	SQ_EV_OUT,         /* handed to the receiving NPA */
	SQ_EV_STALL,       /* transmitter stalled: receive window full */
	SQ_EV_RESUME,      /* transmitter resumed after a stall */
	SQ_EV_STATE,       /* channel state changed */
	SQ_EV_OUTAGE,      /* an outage of the direction begins or ends (sq_event.outage) */
	SQ_EV_DROP_LOSS,   /* lost by the netem stage's loss model */
	SQ_EV_DUPLICATE,   /* a copy made by the netem stage enters (pkt_id: the copy's) */
	SQ_EV_CORRUPT,     /* the netem stage flips one bit of the packet */
	SQ_EV_TYPES
};

struct sq_event {
	sq_time_us t;
	enum sq_event_type type;
	enum sq_dir dir;           /* meaningless for SQ_EV_STATE */
	uint64_t pkt_id;           /* 0 for SQ_EV_STATE, STALL, RESUME */
	uint32_t ip_len;
	enum sq_state state;       /* channel state at t */
	uint32_t attempt;          /* TX, HIT, DROP_ERR, RECV, OUT: 0-based attempt */
	uint32_t sbuf;             /* send-buffer bytes after the event */
	uint32_t rbuf;             /* receive-buffer bytes after the event */
	void *user;                /* the pointer given to sq_model_arrive() */
	uint8_t router_class;      /* DROP_ROUTER, ECN_MARK, ENQUEUE behind a router stage:
				    * the class index; SQ_ROUTER_NO_CLASS otherwise */
	bool outage;               /* OUTAGE: true when it begins, false when it ends */
	uint32_t corrupt_bit;      /* CORRUPT: the bit to flip, 8 x byte offset + bit
				    * (0 = least significant) */
	uint64_t copy_of;          /* DUPLICATE: the id of the packet copied */
	uint32_t host;             /* the cell's host the event concerns (0-based: host 1 is
				    * 0); for STATE the host whose channel changed */
};

/* Called for every event, synchronously; it must not call back into the model. */
typedef void (*sq_event_sink)(void *ctx, const struct sq_event *ev);

struct sq_model;

/* Validates cfg (NULL and a message in err on failure). The model copies what it
 * needs from cfg, including the rate and trace arrays. */
struct sq_model *sq_model_new(const struct sq_link_config *cfg, sq_event_sink sink,
			      void *sink_ctx, char *err, size_t errlen);
void sq_model_free(struct sq_model *m);

/* The netem stage's duplication asks the caller for the copy's user pointer (a copy of
 * the packet it owns); NULL means no copy could be had, and none is made. Without this
 * hook a copy carries the original's user pointer. */
typedef void *(*sq_clone_fn)(void *ctx, void *user);
void sq_model_set_clone(struct sq_model *m, sq_clone_fn clone, void *ctx);

/* Advances to now, then takes the packet. Returns its packet id (>= 1; ids
 * count up across both directions in arrival order), or 0 if memory for it
 * could not be had (then no event was emitted and the caller keeps the packet). */
uint64_t sq_model_arrive(struct sq_model *m, enum sq_dir dir, sq_time_us now,
			 const struct sq_pkt_meta *meta, void *user);

/* The same for a packet of host `host` (0-based) of a cell (LINK_MODEL.md "A cell of
 * several hosts"); sq_model_arrive is host 0's. Requires host < sq_model_hosts(m). */
uint64_t sq_model_arrive_host(struct sq_model *m, uint32_t host, enum sq_dir dir, sq_time_us now,
			      const struct sq_pkt_meta *meta, void *user);

/* The number of hosts of the cell (1 without a cell). */
uint32_t sq_model_hosts(const struct sq_model *m);

/* Emits every event up to and including time now (channel state changes
 * included, so advance to the times the run really reaches). */
void sq_model_advance(struct sq_model *m, sq_time_us now);

/* The channel's state at the model's time (at t = 0 the configured initial state, or where
 * a running channel is). */
enum sq_state sq_model_channel_state(const struct sq_model *m);
/* The same for host `host` (0-based) of a cell; host 0's is sq_model_channel_state. */
enum sq_state sq_model_host_channel_state(const struct sq_model *m, uint32_t host);

/* Whether direction dir (of host 1 in a cell) is in an outage at the model's time
 * (LINK_MODEL.md "Outages"). */
bool sq_model_in_outage(const struct sq_model *m, enum sq_dir dir);

/* Earliest time at which the model has something to do; SQ_TIME_NEVER if none. */
sq_time_us sq_model_next_deadline(const struct sq_model *m);

/* Host 1's (sq_model_host_decided_outs: any host's). Fills outs (room for cap)
 * with the decided outs of dir that come after `after` (NULL:
 * from the first) and no later than until, in the order their SQ_EV_OUT events will come,
 * and returns how many it wrote. Fewer than cap: that is all of them; exactly cap: ask
 * again with after = the last one for more. A packet decided later may go out before one
 * reported now (out of order, or at the same time as it); `after` leaves it out, so a
 * caller that keeps `after` at the last packet it acted on sees every packet at most once
 * and always later than the one before. Reads only; the model is unchanged. */
size_t sq_model_decided_outs(const struct sq_model *m, enum sq_dir dir,
			     const struct sq_decided_out *after, sq_time_us until,
			     struct sq_decided_out *outs, size_t cap);
/* The same for host `host` (0-based) of a cell: its own packets of dir, in its own order. */
size_t sq_model_host_decided_outs(const struct sq_model *m, uint32_t host, enum sq_dir dir,
				  const struct sq_decided_out *after, sq_time_us until,
				  struct sq_decided_out *outs, size_t cap);

/* Per direction, how many events of each type have been emitted (all hosts of a cell). */
uint64_t sq_model_count(const struct sq_model *m, enum sq_dir dir, enum sq_event_type type);
/* The same for one host (0-based) of a cell. */
uint64_t sq_model_host_count(const struct sq_model *m, uint32_t host, enum sq_dir dir,
			     enum sq_event_type type);

/* Packets the model still holds (queued, in flight, in ARQ, in the receive buffer). */
size_t sq_model_pending(const struct sq_model *m);

/* One class of a direction's router stage (LINK_MODEL.md "The router stage"):
 * false if dir has no router stage or cls is not one of its classes. */
bool sq_model_router_stats(const struct sq_model *m, enum sq_dir dir, size_t cls,
			   struct sq_router_class_stats *out);

/* The device queue of a direction's router stage (LINK_MODEL.md "The device queue"):
 * packets and bytes in it now; false if dir has no router stage. */
bool sq_model_device_queue(const struct sq_model *m, enum sq_dir dir, uint64_t *pkts,
			   uint64_t *bytes);

const char *sq_event_name(enum sq_event_type type);   /* "in", "drop_sbuf", ... */

#endif

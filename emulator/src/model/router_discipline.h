/* What a queue discipline of the router stage is to the router (router.c), its check
 * (router_check.c) and the configuration file (config/config_router.c): one ops table per
 * discipline, in its own file router_<name>.c, listed once in router_table.def.
 * Semantics: LINK_MODEL.md "The router stage". No I/O, no global state. */
#ifndef SQ_ROUTER_DISCIPLINE_H
#define SQ_ROUTER_DISCIPLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"
#include "pkt_meta.h"
#include "rng.h"
#include "router_queue.h"

enum sq_router_verdict {
	SQ_ROUTER_ADMIT,       /* into the class queue */
	SQ_ROUTER_MARK,        /* set CE, then into the class queue */
	SQ_ROUTER_DROP,        /* drop_router */
	SQ_ROUTER_DROP_HEAD,   /* drop_router for queued packets from the head until the
				* arrival fits, then the arrival into the class queue */
};

/* What becomes of the head packet of a class queue as it leaves it (a dequeue). */
enum sq_router_fate {
	SQ_ROUTER_SEND,        /* on into the send buffer (or the device queue) */
	SQ_ROUTER_SEND_CE,     /* set CE (ecn_mark), then on */
	SQ_ROUTER_DROP_OUT,    /* drop_router at the head; the next head is judged at the same time */
};

/* A key of a discipline's own in [DIR.router.class.NAME] (beyond discipline and limit):
 * where its value is, for the defaults, the checks and the canonical output. */
enum sq_router_key_kind {
	SQ_RKEY_BYTES,   /* uint32_t, written "2000B"; required: must be set (> 0) */
	SQ_RKEY_REAL,    /* double, written with %.17g; has default_value */
	SQ_RKEY_BOOL,    /* bool, written true/false; default_value != 0: true unless set */
	SQ_RKEY_TIME,    /* sq_time_us, written "5000us"; has default_value (µs) */
	SQ_RKEY_COUNT,   /* uint32_t, written as a whole number; has default_value */
};

struct sq_router_key {
	const char *name;             /* "red.min" */
	enum sq_router_key_kind kind;
	size_t offset;                /* in struct sq_router_class */
	double default_value;         /* SQ_RKEY_REAL, SQ_RKEY_TIME, SQ_RKEY_COUNT, SQ_RKEY_BOOL */
};

struct sq_router_discipline {
	const char *name;             /* `discipline = NAME` */
	bool limit_in_bytes;          /* `limit = 6000B`; else a number of packets */
	const struct sq_router_key *keys;   /* its own keys, ending with a NULL name; NULL: none */

	/* The class's configuration beyond the limit (>= 1, checked by router_check.c);
	 * NULL or false with "<cp>.KEY: ..." in err. cp is the class's path. */
	bool (*check)(const struct sq_router_class *c, const char *cp, char *err, size_t errlen);

	/* Each function gets the class's state area of its discipline (`state`: union
	 * sq_discipline_state in router.h, zeroed at the start). */

	/* Sets up the state for class c of a direction whose MTU is mtu; false if memory it
	 * allocates could not be had. NULL: nothing beyond zeros. */
	bool (*init)(void *state, const struct sq_router_class *c, uint32_t mtu);

	/* Frees what init allocated; NULL: nothing. */
	void (*release)(void *state);

	/* The congestion decision for an arrival at now (before the limit), rate_bps the
	 * direction's bandwidth; NULL: always SQ_ROUTER_ADMIT. Counts nothing. */
	enum sq_router_verdict (*signal)(void *state, const struct sq_router_class *c,
					 const struct sq_router_queue *q, const struct sq_pkt_meta *meta,
					 sq_time_us now, uint64_t rate_bps, struct sq_rng *rng);

	/* Whether ip_len more bytes (one more packet) would pass the class's limit. */
	bool (*over_limit)(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len);

	/* At the limit the arrival is dropped (false) or queued packets (true): from the head,
	 * or the one `victim` names. */
	bool drops_from_head;

	/* With drops_from_head: the place in the class queue (0: the head) of the packet to drop
	 * to make room, as it is dropped (the discipline notes it); NULL: the head. */
	size_t (*victim)(void *state, const struct sq_router_class *c, const struct sq_router_queue *q);

	/* The decision on the head packet of the class queue as it leaves at now (q still holds
	 * it, head is its head). Asked once per packet, in the order the packets leave, at the
	 * moment the packet can move on (the send buffer or the device queue has room for it);
	 * after SQ_ROUTER_DROP_OUT the next head is asked at the same now. rng: the router's
	 * stream, as for signal. NULL: always SQ_ROUTER_SEND (the discipline judges arrivals
	 * only). */
	enum sq_router_fate (*on_dequeue)(void *state, const struct sq_router_class *c,
					  const struct sq_router_queue *q,
					  const struct sq_router_pkt *head, sq_time_us now,
					  struct sq_rng *rng);

	/* The class queue changed: one packet joined it (at the tail) or left it (the head).
	 * The discipline may then move the packet it serves next to the head
	 * (sq_rqueue_to_front), so that a class holds more than one FIFO in its one queue
	 * (DualPI2's L and C queues). NULL: the class queue is one FIFO. */
	void (*arrange)(void *state, const struct sq_router_class *c, struct sq_router_queue *q);

	/* The class queue is empty at now (it ran empty, or an arrival was refused into an
	 * empty queue); NULL: nothing to note. */
	void (*on_empty)(void *state, sq_time_us now);

	/* The average queue it keeps, for the statistics (bytes); NULL: 0. */
	double (*average)(const void *state);
};

/* The discipline of row d of router_table.def, or NULL if d is not one. */
const struct sq_router_discipline *sq_router_discipline(enum sq_qdisc d);

/* The discipline called name; false if none is. */
bool sq_router_discipline_named(const char *name, enum sq_qdisc *out);

/* Every discipline's name in table order, each between quote, the last two joined by last:
 * "'pfifo', 'bfifo' or 'red'"; with in_bytes >= 0 only those whose limit counts bytes (1) or
 * packets (0). Returns how many. */
size_t sq_router_discipline_names(char *out, size_t n, const char *quote, const char *last,
				  int in_bytes);

#endif

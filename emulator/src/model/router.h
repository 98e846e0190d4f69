/* The router stage of one direction: classification, the class queues with
 * their disciplines (router_discipline.h, one file each), the scheduler (strict priority or
 * deficit round robin) and the optional device queue, from which packets move
 * on into the send buffer.
 * Semantics: LINK_MODEL.md "The router stage". No I/O, no global state. */
#ifndef SQ_ROUTER_H
#define SQ_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"
#include "pkt_meta.h"
#include "rng.h"
#include "router_codel.h"
#include "router_discipline.h"
#include "router_dualpi2.h"
#include "router_fq_codel.h"
#include "router_pie.h"
#include "router_queue.h"
#include "router_red.h"
#include "router_stats.h"

struct sq_router_class_state {
	struct sq_router_queue queue;
	union sq_discipline_state {  /* what its discipline keeps (router_discipline.h) */
		struct sq_red_state red;
		struct sq_codel_state codel;
		struct sq_fq_codel_state fq_codel;
		struct sq_pie_state pie;
		struct sq_dualpi2_state dualpi2;
	} state;
	uint64_t quantum;        /* DRR bytes per turn */
	uint64_t deficit;
	bool active;             /* in the DRR list */
	bool turn_started;       /* the quantum of the current turn has been added */
	struct sq_router_class_stats stats;   /* counters; sq_model_router_stats derives the rest */
};

struct sq_router {
	struct sq_router_config cfg;
	struct sq_router_class_state cls[SQ_ROUTER_MAX_CLASSES];
	size_t active[SQ_ROUTER_MAX_CLASSES];   /* DRR ring of class indices, head = current */
	size_t active_head, active_len;
	struct sq_rng rng;                      /* RED's, PIE's and DualPI2's draws */
	uint64_t flow_key;                      /* the flow hash's key (sq_router_flow_hash) */
	uint64_t next_order;
	size_t queued;                          /* packets in all class queues */
	struct sq_router_queue device;          /* the device queue (cfg.device_queue > 0) */
};

/* cfg must have passed sq_router_check; mtu is the direction's (the smallest
 * DRR quantum); stream is the router stream id of the direction, hash_stream its flow
 * hash's (rng.h). False if memory (the device queue's, a discipline's) could not be had
 * (then release it). */
bool sq_router_init(struct sq_router *r, const struct sq_router_config *cfg, uint32_t mtu,
		    uint64_t seed, uint32_t replication, uint32_t stream, uint32_t hash_stream);
void sq_router_release(struct sq_router *r);

/* The class of a packet: the first matching filter's, else the default. */
size_t sq_router_classify(const struct sq_router_config *cfg, const struct sq_pkt_meta *meta);

/* Room for one more packet in class cls; false if memory could not be had. */
bool sq_router_reserve(struct sq_router *r, size_t cls);

/* The discipline's decision for a packet arriving at now into class cls;
 * rate_bps is the direction's bandwidth at now (RED's idle correction).
 * Updates the class's statistics (arrivals, drops, marks). */
enum sq_router_verdict sq_router_judge(struct sq_router *r, size_t cls,
				       const struct sq_pkt_meta *meta, sq_time_us now,
				       uint64_t rate_bps);

/* After SQ_ROUTER_DROP_HEAD for an arrival of ip_len bytes into class cls: the next
 * queued packet to drop (removed from the head and counted), while the arrival does not
 * fit yet; false once it fits. */
bool sq_router_push_out(struct sq_router *r, size_t cls, uint32_t ip_len, struct sq_router_pkt *out);

/* The average queue the discipline of class cls keeps (RED's), 0 if none. */
double sq_router_average(const struct sq_router *r, size_t cls);

/* The seeded hash of a packet's 5-tuple (addresses, protocol, ports): x = the key, then for
 * each of the five 64-bit words src[0..7], src[8..15], dst[0..7], dst[8..15] (big-endian)
 * and proto << 32 | sport << 16 | dport, x = splitmix64 of x ^ word; the hash is x >> 32.
 * LINK_MODEL.md "FQ-CoDel". */
uint32_t sq_router_flow_hash(const struct sq_router *r, const struct sq_pkt_meta *meta);

/* Appends a packet admitted at now to class cls (room reserved); ecn is its IP ECN field
 * (CE if the discipline marked it on arrival), flow_hash its sq_router_flow_hash. */
void sq_router_enqueue(struct sq_router *r, size_t cls, uint64_t id, void *user, uint32_t ip_len,
		       uint8_t ecn, uint32_t flow_hash, sq_time_us now);

/* Where the stage reports what a discipline decides as a packet leaves its class queue
 * (router_discipline.h on_dequeue): fn(ctx, the packet, SQ_ROUTER_DROP_OUT: it is gone, or
 * SQ_ROUTER_SEND_CE: it was marked and moves on). */
struct sq_router_report {
	void (*fn)(void *ctx, const struct sq_router_pkt *p, enum sq_router_fate fate);
	void *ctx;
};

/* The packet that moves into the send buffer next, or NULL if the stage holds none.
 * With a device queue, first moves packets from the class queues (in the scheduler's
 * order, at now) into the device queue while it holds fewer than cfg.device_queue;
 * each is judged by its discipline on the way (drops and marks go to report) and the
 * answer is the device queue's head. Without one, the head of the class the scheduler
 * serves next, not judged yet. Calling it again without sq_router_take gives the same
 * packet; a packet is judged once, when it leaves its class queue. */
const struct sq_router_pkt *sq_router_next(struct sq_router *r, sq_time_us now,
					   const struct sq_router_report *report);

/* Removes the packet sq_router_next returned into *out. Without a device queue its
 * discipline judges it now (drops and marks go to report): false if it was dropped, and
 * then sq_router_next at the same now gives the next candidate (which may be larger). */
bool sq_router_take(struct sq_router *r, sq_time_us now, const struct sq_router_report *report,
		    struct sq_router_pkt *out);

/* Packets the stage holds: in the class queues and in the device queue. */
static inline size_t sq_router_held(const struct sq_router *r)
{
	return r->queued + r->device.count;
}

#endif

/* The counters of one class of a direction's router stage (LINK_MODEL.md "The router
 * stage"): kept by the router (router.h), reported by sq_model_router_stats (link_model.h). */
#ifndef SQ_ROUTER_STATS_H
#define SQ_ROUTER_STATS_H

#include <stdint.h>

struct sq_router_class_stats {
	uint64_t arrivals;       /* packets classified into the class (after the MTU check) */
	uint64_t enqueued;       /* moved on into the send buffer */
	uint64_t drops;          /* drop_router: tail_drops + red_drops + dequeue_drops */
	uint64_t tail_drops;     /* at the class's limit */
	uint64_t red_drops;      /* the discipline's drops of arrivals (RED's early or forced drops) */
	uint64_t dequeue_drops;  /* the discipline's drops at the head as packets leave (CoDel's) */
	uint64_t marks;          /* ecn_mark, on arrival or as packets leave */
	uint64_t backlog_pkts;   /* waiting in the class queue now */
	uint64_t backlog_bytes;
	double red_avg;          /* RED's average queue in bytes (0 for pfifo/bfifo) */
};

#endif

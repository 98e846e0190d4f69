/* FQ-CoDel (RFC 8290) as Linux's sch_fq_codel runs it with its defaults: packets hashed into
 * `flows` buckets by their 5-tuple (sq_router_flow_hash, the bucket (hash x flows) >> 32),
 * a new and an old list of active flows served by deficit round robin (a quantum of IP bytes
 * per turn), and CoDel per flow at dequeue (router_codel.h's controller, one per flow, on
 * the class's whole backlog as Linux). The flows' packets stay in the class's one queue: the
 * arrange hook moves the oldest packet of the flow served next to its head. At the limit
 * the head of the fattest flow (in bytes) is dropped. LINK_MODEL.md "FQ-CoDel". */
#ifndef SQ_ROUTER_FQ_CODEL_H
#define SQ_ROUTER_FQ_CODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "router_codel.h"

#define SQ_FQ_CODEL_MAX_FLOWS 65536
#define SQ_FQ_CODEL_MIN_QUANTUM 256       /* Linux's bounds */
#define SQ_FQ_CODEL_MAX_QUANTUM 1048576

enum sq_fq_list { SQ_FQ_NONE, SQ_FQ_NEW, SQ_FQ_OLD };

struct sq_fq_flow {
	int64_t deficit;            /* bytes it may still send this turn */
	uint32_t count;             /* its packets in the class queue */
	uint64_t bytes;             /* and their bytes */
	struct sq_codel_vars cv;    /* its CoDel */
	int32_t next;               /* the next flow in its list; -1: the last */
	enum sq_fq_list list;
};

struct sq_fq_codel_state {
	struct sq_fq_flow *flows;   /* n_flows of them (allocated by init) */
	uint32_t n_flows;
	int32_t head[3], tail[3];   /* per list (SQ_FQ_NEW, SQ_FQ_OLD); -1: empty */
	uint32_t maxpacket;         /* the direction's MTU */
	int32_t head_flow;          /* the flow of the class queue's head; -1: empty */
	uint32_t head_len;          /* its size */
	size_t seen;                /* the class queue's count at the last arrange */
	uint32_t quantum;           /* bytes a flow's deficit gains per turn */
};

/* The bucket of a flow hash among n flows. */
static inline uint32_t sq_fq_bucket(uint32_t flow_hash, uint32_t n)
{
	return (uint32_t)(((uint64_t)flow_hash * n) >> 32);
}

#endif

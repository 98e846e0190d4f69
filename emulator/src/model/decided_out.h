/* Decided outs (link_model.h, sq_model_decided_outs): what one is, and the caller's list
 * of them, kept in out order and bounded, that the query collects into. */
#ifndef SQ_DECIDED_OUT_H
#define SQ_DECIDED_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"

/* A packet whose `out` is decided: its time can no longer change, whatever arrives
 * later (LINK_MODEL.md, "Decided outs"). */
struct sq_decided_out {
	sq_time_us t;              /* its SQ_EV_OUT will come at this time */
	uint64_t order;            /* its place in the direction's transmission order */
	uint64_t pkt_id;
	void *user;                /* the pointer given to sq_model_arrive() */
};

/* True if a goes out before b: earlier time, or the same time and earlier in the
 * direction's transmission order (the order of simultaneous outs, LINK_MODEL.md). */
bool sq_decided_before(const struct sq_decided_out *a, const struct sq_decided_out *b);

/* Inserts e into list[0 .. *n), sorted by sq_decided_before. When the list already
 * holds cap entries, the latest of them and e is left out. */
void sq_decided_insert(struct sq_decided_out *list, size_t *n, size_t cap,
		       const struct sq_decided_out *e);

#endif

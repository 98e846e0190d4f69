/* A caller's list of decided outs (link_model.h, sq_model_decided_outs), kept in out
 * order and bounded: the query collects into it while it walks a direction. */
#ifndef SQ_DECIDED_OUT_H
#define SQ_DECIDED_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "link_model.h"

/* True if a goes out before b: earlier time, or the same time and earlier in the
 * direction's transmission order (the order of simultaneous outs, LINK_MODEL.md). */
bool sq_decided_before(const struct sq_decided_out *a, const struct sq_decided_out *b);

/* Inserts e into list[0 .. *n), sorted by sq_decided_before. When the list already
 * holds cap entries, the latest of them and e is left out. */
void sq_decided_insert(struct sq_decided_out *list, size_t *n, size_t cap,
		       const struct sq_decided_out *e);

#endif

/* Outages as a process (LINK_MODEL.md "Outages"): from t = 0, a period without an outage
 * (length drawn from `every`), then an outage (`length`), and so on, each length drawn like a
 * channel state's from a stream of its own, so the timeline depends only on the seed, the
 * replication and the stream: never on the packets. Queried in non-decreasing time. */
#ifndef SQ_OUTAGE_H
#define SQ_OUTAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"
#include "rng.h"

struct sq_outages {
	bool enabled;
	struct sq_dist every, length;
	struct sq_rng rng;
	bool active;          /* in an outage since the last change */
	sq_time_us end;       /* when the current period ends */
};

/* Checks cfg; `where` is the section in messages: "channel" (the link's), "down", "up". */
bool sq_outages_check(const struct sq_outage_config *cfg, const char *where, char *err,
		      size_t errlen);
/* A disabled cfg gives a process that never changes. */
void sq_outages_init(struct sq_outages *o, const struct sq_outage_config *cfg, uint64_t seed,
		     uint32_t replication, uint32_t stream);
/* When the process next changes (an outage begins or ends); SQ_TIME_NEVER if disabled. */
sq_time_us sq_outages_next_change(const struct sq_outages *o);
/* Moves past the change at sq_outages_next_change(): an outage begins or ends there. */
void sq_outages_change(struct sq_outages *o);

#endif

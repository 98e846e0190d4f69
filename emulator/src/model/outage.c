#include "outage.h"

#include <stdio.h>

#include "dist.h"

bool sq_outages_check(const struct sq_outage_config *cfg, const char *where, char *err,
		      size_t errlen)
{
	if (!cfg->enabled)
		return true;
	char what[48];
	snprintf(what, sizeof what, "%s.outage_every", where);
	if (!sq_dist_check(&cfg->every, what, err, errlen))
		return false;
	snprintf(what, sizeof what, "%s.outage_length", where);
	return sq_dist_check(&cfg->length, what, err, errlen);
}

void sq_outages_init(struct sq_outages *o, const struct sq_outage_config *cfg, uint64_t seed,
		     uint32_t replication, uint32_t stream)
{
	*o = (struct sq_outages){ .enabled = cfg->enabled, .end = SQ_TIME_NEVER };
	if (!cfg->enabled)
		return;
	o->every = cfg->every;
	o->length = cfg->length;
	sq_rng_init(&o->rng, seed, replication, stream);
	o->end = sq_dist_draw(&o->every, &o->rng);
}

sq_time_us sq_outages_next_change(const struct sq_outages *o)
{
	return o->end;
}

void sq_outages_change(struct sq_outages *o)
{
	o->active = !o->active;
	o->end += sq_dist_draw(o->active ? &o->length : &o->every, &o->rng);
}

#include "netem_check.h"

#include <stdio.h>

#include "link_config.h"

static bool probability(double p, const char *dn, const char *key, const char *what, char *err,
			size_t errlen)
{
	if (p >= 0 && p <= 1)
		return true;
	snprintf(err, errlen, "%s.%s: %s %g is outside [0, 1] (0%%..100%%)", dn, key, what, p);
	return false;
}

static bool check_loss(const struct sq_netem_config *c, const char *dn, char *err, size_t errlen)
{
	static const char *const names[][SQ_NETEM_LOSS_PARAMS] = {
		[SQ_NETEM_LOSS_RANDOM] = { "probability", "correlation", NULL, NULL, NULL },
		[SQ_NETEM_LOSS_GEMODEL] = { "p", "r", "1-h", "1-k", NULL },
		[SQ_NETEM_LOSS_STATE] = { "p13", "p31", "p32", "p23", "p14" },
	};
	if (c->loss_model == SQ_NETEM_LOSS_NONE)
		return true;
	for (int i = 0; i < SQ_NETEM_LOSS_PARAMS && names[c->loss_model][i]; i++)
		if (!probability(c->loss[i], dn, "netem_loss", names[c->loss_model][i], err, errlen))
			return false;
	if (c->loss_model != SQ_NETEM_LOSS_STATE)
		return true;
	/* out of state 1 and out of state 3 the probabilities share one draw */
	if (c->loss[4] + c->loss[0] > 1 || c->loss[2] + c->loss[1] > 1) {
		snprintf(err, errlen, "%s.netem_loss: state needs p13 + p14 <= 1 and p31 + p32 <= 1, got "
			 "p13 %g, p14 %g, p31 %g, p32 %g", dn, c->loss[0], c->loss[4], c->loss[1], c->loss[2]);
		return false;
	}
	return true;
}

static bool check_chance(const struct sq_netem_chance *ch, const char *dn, const char *key,
			 char *err, size_t errlen)
{
	return probability(ch->p, dn, key, "probability", err, errlen) &&
	       probability(ch->corr, dn, key, "correlation", err, errlen);
}

static bool check_delay(const struct sq_netem_config *c, const char *dn, char *err, size_t errlen)
{
	if (c->latency_us < 0 || c->latency_us > SQ_MAX_DELAY_US || c->jitter_us < 0 ||
	    c->jitter_us > SQ_MAX_DELAY_US) {
		snprintf(err, errlen, "%s.netem_delay: delay and jitter must be in [0, %lld] us, got %lld us "
			 "and %lld us", dn, SQ_MAX_DELAY_US, (long long)c->latency_us, (long long)c->jitter_us);
		return false;
	}
	if (!probability(c->delay_corr, dn, "netem_delay", "correlation", err, errlen))
		return false;
	/* tc refuses these combinations too */
	if (c->distribution != SQ_NETEM_DIST_UNIFORM && c->jitter_us == 0) {
		snprintf(err, errlen, "%s.netem_distribution: a distribution needs a jitter in netem_delay", dn);
		return false;
	}
	if (c->reorder.p > 0 && c->latency_us == 0) {
		snprintf(err, errlen, "%s.netem_reorder: reordering needs a delay in netem_delay (a reordered "
			 "packet skips it)", dn);
		return false;
	}
	if (c->gap > 0 && c->reorder.p <= 0) {
		snprintf(err, errlen, "%s.netem_gap: a gap needs a reorder probability in netem_reorder", dn);
		return false;
	}
	return true;
}

bool sq_netem_check(const struct sq_netem_config *c, const char *dn, char *err, size_t errlen)
{
	return check_loss(c, dn, err, errlen) && check_delay(c, dn, err, errlen) &&
	       check_chance(&c->reorder, dn, "netem_reorder", err, errlen) &&
	       check_chance(&c->duplicate, dn, "netem_duplicate", err, errlen) &&
	       check_chance(&c->corrupt, dn, "netem_corrupt", err, errlen);
}

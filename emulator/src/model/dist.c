#include "dist.h"

#include <math.h>
#include <stdio.h>

/* Lengths above this (about 11.6 days) are refused so sums of times cannot overflow. */
#define SQ_DIST_MAX_US 1000000000000LL

static bool fail(char *err, size_t errlen, const char *what, const char *msg, long long v)
{
	snprintf(err, errlen, "%s: %s, got %lld", what, msg, v);
	return false;
}

static bool check_range(const char *what, const char *field, sq_time_us v, sq_time_us lo,
			char *err, size_t errlen)
{
	if (v >= lo && v <= SQ_DIST_MAX_US)
		return true;
	char msg[96];
	snprintf(msg, sizeof msg, "%s must be in [%lld, %lld] us", field, (long long)lo,
		 (long long)SQ_DIST_MAX_US);
	return fail(err, errlen, what, msg, (long long)v);
}

static bool check_truncation(const struct sq_dist *d, const char *what, char *err, size_t errlen)
{
	if (!check_range(what, "exponential min", d->min, 0, err, errlen) ||
	    !check_range(what, "exponential max", d->max, 1, err, errlen))
		return false;
	if (d->min > d->max) {
		snprintf(err, errlen, "%s: truncated exponential needs min <= max, got min %lld > max %lld",
			 what, (long long)d->min, (long long)d->max);
		return false;
	}
	return true;
}

bool sq_dist_check(const struct sq_dist *d, const char *what, char *err, size_t errlen)
{
	switch (d->kind) {
	case SQ_DIST_FIXED:
		return check_range(what, "fixed length", d->a, 1, err, errlen);
	case SQ_DIST_UNIFORM:
		if (!check_range(what, "uniform a", d->a, 1, err, errlen) ||
		    !check_range(what, "uniform b", d->b, 1, err, errlen))
			return false;
		if (d->a > d->b) {
			snprintf(err, errlen, "%s: uniform needs a <= b, got a %lld > b %lld", what,
				 (long long)d->a, (long long)d->b);
			return false;
		}
		return true;
	case SQ_DIST_EXPONENTIAL:
		if (!check_range(what, "exponential mean", d->a, 1, err, errlen))
			return false;
		return !d->truncated || check_truncation(d, what, err, errlen);
	}
	return fail(err, errlen, what, "unknown distribution kind (expected fixed, uniform or exponential)",
		    (long long)d->kind);
}

/* Inverse CDF of the exponential restricted to [min, max]: by memorylessness
 * this is min + the inverse CDF of an exponential truncated to [0, max - min]. */
static double truncated_exponential(double mean, double min, double max, double u)
{
	double span = max - min;
	return min - mean * log1p(u * expm1(-span / mean));
}

static sq_time_us clamp_length(double x, sq_time_us lo, sq_time_us hi)
{
	sq_time_us v = llround(x);
	if (lo < 1)
		lo = 1;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return v;
}

sq_time_us sq_dist_draw(const struct sq_dist *d, struct sq_rng *r)
{
	switch (d->kind) {
	case SQ_DIST_FIXED:
		return d->a;
	case SQ_DIST_UNIFORM:
		return sq_rng_uniform_int(r, d->a, d->b);
	case SQ_DIST_EXPONENTIAL: {
		double u = sq_rng_uniform01(r);
		double mean = (double)d->a;
		if (d->truncated)
			return clamp_length(truncated_exponential(mean, (double)d->min, (double)d->max, u),
					    d->min, d->max);
		return clamp_length(-mean * log1p(-u), 1, SQ_TIME_NEVER);
	}
	}
	return 1;
}

#include "capacity_trace.h"

#include <stdio.h>
#include <stdlib.h>

bool sq_capacity_trace_check(const struct sq_opportunity_trace *t, const char *dir_name,
			     char *err, size_t errlen)
{
	if (t->len == 0)
		return true;
	for (size_t i = 0; i < t->len; i++) {
		if (t->ms[i] > SQ_MAX_OPPORTUNITY_MS) {
			snprintf(err, errlen, "%s.bandwidth: opportunity %zu at %u ms is after the limit %u ms",
				 dir_name, i, t->ms[i], SQ_MAX_OPPORTUNITY_MS);
			return false;
		}
		if (i > 0 && t->ms[i] < t->ms[i - 1]) {
			snprintf(err, errlen, "%s.bandwidth: opportunity %zu at %u ms comes before the one "
				 "ahead of it (%u ms); times must be non-decreasing", dir_name, i, t->ms[i],
				 t->ms[i - 1]);
			return false;
		}
	}
	if (t->ms[t->len - 1] == 0) {
		snprintf(err, errlen, "%s.bandwidth: the trace must last a nonzero time (its last "
			 "opportunity is its period), got every opportunity at 0 ms", dir_name);
		return false;
	}
	return true;
}

bool sq_capacity_trace_init(struct sq_capacity_trace *c, const struct sq_opportunity_trace *t)
{
	*c = (struct sq_capacity_trace){ 0 };
	if (t->len == 0)
		return true;
	c->at = malloc(t->len * sizeof *c->at);
	if (!c->at)
		return false;
	for (size_t i = 0; i < t->len; i++)
		c->at[i] = (sq_time_us)t->ms[i] * 1000;
	c->n = t->len;
	c->period = c->at[t->len - 1];
	return true;
}

void sq_capacity_trace_release(struct sq_capacity_trace *c)
{
	free(c->at);
	*c = (struct sq_capacity_trace){ 0 };
}

static sq_time_us opportunity_time(const struct sq_capacity_trace *c, uint64_t g)
{
	return (sq_time_us)(g / c->n) * c->period + c->at[g % c->n];
}

/* The first opportunity after t (strictly): binary search within t's cycle. */
static uint64_t first_after(const struct sq_capacity_trace *c, sq_time_us t)
{
	uint64_t cycle = (uint64_t)(t / c->period);
	sq_time_us within = t - (sq_time_us)cycle * c->period;
	size_t lo = 0, hi = c->n;   /* the first index with at > within is in [lo, hi] */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->at[mid] <= within)
			lo = mid + 1;
		else
			hi = mid;
	}
	return cycle * c->n + lo;   /* lo == n: the next cycle's first opportunity */
}

sq_time_us sq_capacity_trace_serialise(struct sq_capacity_trace *c, sq_time_us start,
				       uint64_t bytes, bool carry)
{
	uint64_t g;
	if (carry && c->used && opportunity_time(c, c->last) == start) {
		/* Waiting behind the packet that ended here: the rest of its opportunity first. */
		uint64_t from_left = bytes < c->left ? bytes : c->left;
		c->left -= (uint32_t)from_left;
		bytes -= from_left;
		if (bytes == 0)
			return start;
		g = c->last + 1;
	} else {
		g = first_after(c, start);
	}
	uint64_t needed = (bytes + SQ_OPPORTUNITY_BYTES - 1) / SQ_OPPORTUNITY_BYTES;
	c->last = g + needed - 1;
	c->left = (uint32_t)(needed * SQ_OPPORTUNITY_BYTES - bytes);
	c->used = true;
	return opportunity_time(c, c->last);
}

uint64_t sq_capacity_trace_mean_bps(const struct sq_capacity_trace *c)
{
	/* n opportunities of 1504 B per period µs. */
	return (uint64_t)((double)c->n * SQ_OPPORTUNITY_BYTES * 8.0 * 1e6 / (double)c->period);
}

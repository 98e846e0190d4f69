/* Reads the statistics of every qdisc and class on one device through cached libnl
 * dumps: the caches are allocated once and refilled per sample. */
#ifndef SQUALL_TC_SAMPLER_H
#define SQUALL_TC_SAMPLER_H

#include <stddef.h>
#include <stdio.h>

#include "red_marks.h"
#include "sample_row.h"

struct nl_sock;
struct nl_cache;

struct tc_sampler {
	int ifindex;
	struct nl_sock *sock;
	struct nl_sock *red_sock; /* raw dumps for RED marks, opened on first need */
	struct nl_cache *qdiscs;
	struct nl_cache *classes;
	struct red_marks marks;
};

/* 0, or -1 with a message in err naming the device and the step that failed. */
int tc_sampler_open(struct tc_sampler *sampler, const char *device, char *err, size_t err_len);

/* Refreshes the statistics and writes one row per qdisc and class of the device, all
 * stamped time_us. Returns the number of rows, or -1 with a message in err. */
int tc_sampler_write_sample(struct tc_sampler *sampler, int64_t time_us, FILE *out, char *err, size_t err_len);

void tc_sampler_close(struct tc_sampler *sampler);

#endif

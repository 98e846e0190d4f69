#include "link_check.h"

#include <stdio.h>

#include "capacity_trace.h"
#include "cell_config.h"
#include "channel.h"
#include "outage.h"
#include "rate_schedule.h"
#include "netem_check.h"
#include "router_check.h"

static bool check_error_probabilities(const struct sq_direction_config *d, const char *dn,
				      char *err, size_t errlen)
{
	for (int s = 0; s < SQ_STATES; s++) {
		double p = d->error[s];
		/* Written so that NaN fails too. */
		if (!(p >= 0.0 && p <= 1.0)) {
			snprintf(err, errlen, "%s.error_%s: %g is outside [0, 1]", dn,
				 sq_state_name((enum sq_state)s), p);
			return false;
		}
	}
	return true;
}

static bool check_time(sq_time_us v, const char *dn, const char *field, char *err, size_t errlen)
{
	if (v >= 0 && v <= SQ_MAX_DELAY_US)
		return true;
	snprintf(err, errlen, "%s.%s: %lld us is outside [0, %lld] us", dn, field, (long long)v,
		 (long long)SQ_MAX_DELAY_US);
	return false;
}

/* A retry at the instant of the attempt before it would see the same channel state: that is
 * a smaller error probability, not ARQ. */
static bool check_retry_delay(const struct sq_direction_config *d, const char *dn, char *err,
			      size_t errlen)
{
	if (d->arq_retransmissions == 0 || d->arq_delay >= 1)
		return true;
	snprintf(err, errlen, "%s.arq_delay: must be >= 1 us when arq_retransmissions > 0 (%u), got %lld us",
		 dn, d->arq_retransmissions, (long long)d->arq_delay);
	return false;
}

/* A packet of the MTU must fit into the empty send buffer: otherwise it is dropped every time
 * (drop_sbuf), or, behind a router stage, waits there for ever. */
static bool check_send_buffer(const struct sq_direction_config *d, const char *dn, char *err,
			      size_t errlen)
{
	if (d->send_buffer >= d->mtu)
		return true;
	snprintf(err, errlen, "%s.send_buffer: %u B is below the MTU %u B; a packet of the MTU would never fit "
		 "(expected send_buffer >= mtu)", dn, d->send_buffer, d->mtu);
	return false;
}

static bool check_own_outages(const struct sq_direction_config *d, const char *dn, char *err,
			      size_t errlen)
{
	return sq_outages_check(&d->outages, dn, err, errlen);
}

static bool check_direction(const struct sq_direction_config *d, const char *dn, char *err,
			    size_t errlen)
{
	if (d->mtu < 1) {
		snprintf(err, errlen, "%s.mtu: must be >= 1 byte, got 0", dn);
		return false;
	}
	if (d->overhead > SQ_MAX_OVERHEAD) {
		snprintf(err, errlen, "%s.overhead: %u B per packet is more than the limit %u B (a link layer's "
			 "headers, not a multiple of the packet)", dn, d->overhead, SQ_MAX_OVERHEAD);
		return false;
	}
	if (!check_send_buffer(d, dn, err, errlen))
		return false;
	if (d->arq_retransmissions > SQ_MAX_ARQ_RETRANSMISSIONS) {
		snprintf(err, errlen, "%s.arq_retransmissions: %u is more than the limit %u", dn,
			 d->arq_retransmissions, SQ_MAX_ARQ_RETRANSMISSIONS);
		return false;
	}
	return sq_rate_check(d->rate, d->rate_len, dn, err, errlen) &&
	       sq_capacity_trace_check(&d->capacity, dn, err, errlen) &&
	       check_error_probabilities(d, dn, err, errlen) &&
	       check_time(d->delay, dn, "delay", err, errlen) &&
	       check_time(d->arq_delay, dn, "arq_delay", err, errlen) &&
	       check_retry_delay(d, dn, err, errlen) &&
	       check_own_outages(d, dn, err, errlen) &&
	       sq_router_check(d, dn, err, errlen) &&
	       sq_netem_check(&d->netem, dn, err, errlen);
}

/* By time, attempts in one grid step share their number: the step must be a real one. */
static bool check_error_grid(const struct sq_channel_config *c, char *err, size_t errlen)
{
	if (c->error_draws != SQ_ERROR_DRAWS_BY_TIME || (c->error_grid >= 1 && c->error_grid <= SQ_MAX_DELAY_US))
		return true;
	snprintf(err, errlen, "channel.error_grid: must be in [1, %lld] us with error_draws = by_time, got %lld us",
		 (long long)SQ_MAX_DELAY_US, (long long)c->error_grid);
	return false;
}

static bool check_channel(const struct sq_channel_config *c, const struct sq_outage_config *o,
			  char *err, size_t errlen)
{
	return sq_channel_check(c, err, errlen) && check_error_grid(c, err, errlen) &&
	       sq_outages_check(o, "channel", err, errlen);
}

/* A host's own channel and directions (cell.host[k]), named host.K.KEY as the file's
 * [host.K.channel] and [host.K.down] sections name them. */
static bool check_host(const struct sq_link_config *cfg, uint32_t host, char *err, size_t errlen)
{
	char inner[512];
	bool ok = check_channel(sq_host_channel(cfg, host), sq_host_outages(cfg, host), inner,
				sizeof inner);
	for (int d = 0; d < SQ_DIRS && ok; d++) {
		struct sq_direction_config dc = sq_host_direction(cfg, host, (enum sq_dir)d);
		ok = check_direction(&dc, sq_dir_name((enum sq_dir)d), inner, sizeof inner);
	}
	if (!ok)
		snprintf(err, errlen, "host.%u.%s", host + 1, inner);
	return ok;
}

/* LINK_MODEL.md "A cell of several hosts": its size, its scheduler, and what a cell of more
 * than one host does not have yet. */
static bool check_cell(const struct sq_link_config *cfg, char *err, size_t errlen)
{
	const struct sq_cell_config *c = &cfg->cell;
	if (c->hosts > SQ_CELL_MAX_HOSTS) {
		snprintf(err, errlen, "cell.hosts: %u is more than the limit %u", c->hosts, SQ_CELL_MAX_HOSTS);
		return false;
	}
	if (c->scheduler != SQ_CELL_ROUND_ROBIN && c->scheduler != SQ_CELL_PROPORTIONAL_FAIR) {
		snprintf(err, errlen, "cell.scheduler: expected round_robin or proportional_fair, got %d",
			 (int)c->scheduler);
		return false;
	}
	if (c->pf_window > SQ_CELL_MAX_PF_WINDOW) {
		snprintf(err, errlen, "cell.pf_window: %u frames is more than the limit %u", c->pf_window,
			 SQ_CELL_MAX_PF_WINDOW);
		return false;
	}
	for (int d = 0; d < SQ_DIRS && c->hosts > 1; d++) {
		if (cfg->dir[d].router.enabled) {
			snprintf(err, errlen, "%s.router: a cell of %u hosts has no router stage yet "
				 "(docs/cell.md); expected no router with cell.hosts > 1",
				 sq_dir_name((enum sq_dir)d), c->hosts);
			return false;
		}
	}
	for (uint32_t h = 0; c->host && h < sq_cell_hosts(cfg); h++)
		if (!check_host(cfg, h, err, errlen))
			return false;
	return true;
}

bool sq_link_config_check(const struct sq_link_config *cfg, char *err, size_t errlen)
{
	if (!check_channel(&cfg->channel, &cfg->outages, err, errlen))
		return false;
	for (int d = 0; d < SQ_DIRS; d++)
		if (!check_direction(&cfg->dir[d], sq_dir_name((enum sq_dir)d), err, errlen))
			return false;
	return check_cell(cfg, err, errlen);
}

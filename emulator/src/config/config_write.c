/* The canonical form of a configuration: every key, units us, bit, B. */
#include "config_write.h"

#include <inttypes.h>
#include <stdio.h>

#include "config_netem.h"
#include "config_router.h"

/* --- canonical output ---------------------------------------------------------------- */

static void write_dist(FILE *out, const struct sq_dist *d)
{
	switch (d->kind) {
	case SQ_DIST_FIXED:
		fprintf(out, "fixed(%" PRId64 "us)", d->a);
		break;
	case SQ_DIST_UNIFORM:
		fprintf(out, "uniform(%" PRId64 "us, %" PRId64 "us)", d->a, d->b);
		break;
	case SQ_DIST_EXPONENTIAL:
		fprintf(out, "exponential(%" PRId64 "us", d->a);
		if (d->truncated)
			fprintf(out, ", min=%" PRId64 "us, max=%" PRId64 "us", d->min, d->max);
		fputc(')', out);
		break;
	}
}

static void write_outages(FILE *out, const char *prefix, const char *section,
			  const struct sq_outage_config *o)
{
	if (!o->enabled)
		return;
	fprintf(out, "%s%s.outage_every = ", prefix, section);
	write_dist(out, &o->every);
	fprintf(out, "\n%s%s.outage_length = ", prefix, section);
	write_dist(out, &o->length);
	fputc('\n', out);
}

static void write_rate(FILE *out, uint64_t bps)
{
	if (bps == SQ_RATE_UNLIMITED)
		fputs("unlimited", out);
	else
		fprintf(out, "%" PRIu64 "bit", bps);
}

static void write_direction(FILE *out, const char *prefix, const char *name,
			    const struct sq_direction_config *d, const char *capacity_path)
{
	fprintf(out, "%s%s.mtu = %" PRIu32 "B\n", prefix, name, d->mtu);
	fprintf(out, "%s%s.bandwidth = ", prefix, name);
	if (capacity_path[0]) {
		fprintf(out, "mahimahi(%s)\n", capacity_path);
		fprintf(out, "%s%s.bandwidth_opportunities = %zu", prefix, name, d->capacity.len);
	} else if (d->rate_len == 1) {
		write_rate(out, d->rate[0].rate_bps);
	} else {
		for (size_t i = 0; i < d->rate_len; i++) {
			fprintf(out, "%s%" PRId64 "us:", i ? ", " : "", d->rate[i].at_us);
			write_rate(out, d->rate[i].rate_bps);
		}
	}
	fputc('\n', out);
	fprintf(out, "%s%s.delay = %" PRId64 "us\n", prefix, name, d->delay);
	fprintf(out, "%s%s.send_buffer = %" PRIu32 "B\n", prefix, name, d->send_buffer);
	fprintf(out, "%s%s.recv_buffer = %" PRIu32 "B\n", prefix, name, d->recv_buffer);
	fprintf(out, "%s%s.overhead = %" PRIu32 "B\n", prefix, name, d->overhead);
	fprintf(out, "%s%s.error_good = %.17g\n", prefix, name, d->error[SQ_GOOD]);
	fprintf(out, "%s%s.error_bad = %.17g\n", prefix, name, d->error[SQ_BAD]);
	fprintf(out, "%s%s.arq_retransmissions = %" PRIu32 "\n", prefix, name, d->arq_retransmissions);
	fprintf(out, "%s%s.arq_delay = %" PRId64 "us\n", prefix, name, d->arq_delay);
	fprintf(out, "%s%s.in_order = %s\n", prefix, name, d->in_order ? "true" : "false");
	write_outages(out, prefix, name, &d->outages);
	sq_netem_write(out, prefix, name, &d->netem);
}

static void write_host(FILE *out, const char *prefix, uint32_t k, const struct sq_host_config *h)
{
	const struct sq_channel_config *c = &h->channel;
	if (!c->trace) {
		fprintf(out, "%shost.%u.channel.initial = %s\n", prefix, k, c->initial_state == SQ_BAD ? "bad" : "good");
		fprintf(out, "%shost.%u.channel.start = %s\n", prefix, k, c->start == SQ_START_RUNNING ? "running" : "fresh");
		for (int s = 0; s < SQ_STATES; s++) {
			fprintf(out, "%shost.%u.channel.%s = ", prefix, k, s == SQ_GOOD ? "good" : "bad");
			write_dist(out, &c->length[s]);
			fputc('\n', out);
		}
	}
	for (int d = 0; d < SQ_DIRS; d++) {
		const struct sq_direction_config *dc = &h->dir[d];
		const char *n = sq_dir_name((enum sq_dir)d);
		fprintf(out, "%shost.%u.%s.mtu = %" PRIu32 "B\n", prefix, k, n, dc->mtu);
		fprintf(out, "%shost.%u.%s.delay = %" PRId64 "us\n", prefix, k, n, dc->delay);
		fprintf(out, "%shost.%u.%s.send_buffer = %" PRIu32 "B\n", prefix, k, n, dc->send_buffer);
		fprintf(out, "%shost.%u.%s.recv_buffer = %" PRIu32 "B\n", prefix, k, n, dc->recv_buffer);
		fprintf(out, "%shost.%u.%s.error_good = %.17g\n", prefix, k, n, dc->error[SQ_GOOD]);
		fprintf(out, "%shost.%u.%s.error_bad = %.17g\n", prefix, k, n, dc->error[SQ_BAD]);
		fprintf(out, "%shost.%u.%s.arq_retransmissions = %" PRIu32 "\n", prefix, k, n,
			dc->arq_retransmissions);
		fprintf(out, "%shost.%u.%s.arq_delay = %" PRId64 "us\n", prefix, k, n, dc->arq_delay);
		fprintf(out, "%shost.%u.%s.in_order = %s\n", prefix, k, n, dc->in_order ? "true" : "false");
	}
}

/* The cell's keys (nothing for one host, as before cells: a one-host log header is unchanged). */
static void write_cell(FILE *out, const char *prefix, const struct sq_emu_config *cfg)
{
	const struct sq_cell_config *c = &cfg->link.cell;
	if (c->hosts <= 1 && !c->host)
		return;
	fprintf(out, "%scell.hosts = %u\n", prefix, c->hosts ? c->hosts : 1);
	fprintf(out, "%scell.scheduler = %s\n", prefix,
		c->scheduler == SQ_CELL_PROPORTIONAL_FAIR ? "proportional_fair" : "round_robin");
	fprintf(out, "%scell.pf_window = %u\n", prefix, c->pf_window ? c->pf_window : SQ_CELL_DEFAULT_PF_WINDOW);
	if (cfg->n_cell_addresses)
		fprintf(out, "%scell.addresses = %s\n", prefix, cfg->cell_addresses_text);
	for (uint32_t k = 0; c->host && k < (c->hosts ? c->hosts : 1); k++)
		write_host(out, prefix, k + 1, &c->host[k]);
}

void sq_config_write(const struct sq_emu_config *cfg, FILE *out, const char *prefix)
{
	fprintf(out, "%slisten = %s\n", prefix, cfg->listen_text);
	/* Never the token: the log is a result anyone may read (emulator/PROTOCOL.md). */
	fprintf(out, "%stoken = %s\n", prefix, SQ_TOKEN_REDACTED);
	fprintf(out, "%slog = %s\n", prefix, cfg->log_path);
	if (cfg->control_path[0])
		fprintf(out, "%scontrol = %s\n", prefix, cfg->control_path);
	fprintf(out, "%sseed = %" PRIu64 "\n", prefix, cfg->link.seed);
	fprintf(out, "%sreplication = %" PRIu32 "\n", prefix, cfg->link.replication);
	fprintf(out, "%skeepalive = %" PRId64 "us\n", prefix, cfg->keepalive);
	fprintf(out, "%speer_timeout = %" PRId64 "us\n", prefix, cfg->peer_timeout);
	fprintf(out, "%srelease_ahead = %" PRId64 "us\n", prefix, cfg->release_ahead);
	fprintf(out, "%sautostart = %s\n", prefix, cfg->autostart == SQ_AUTOSTART_PEERS ? "peers" : "none");
	const struct sq_channel_config *ch = &cfg->link.channel;
	if (ch->trace) {
		fprintf(out, "%schannel.trace = %s\n", prefix, cfg->trace_path);
		fprintf(out, "%schannel.trace_steps = %zu\n", prefix, ch->trace_len);
	} else {
		fprintf(out, "%schannel.initial = %s\n", prefix, ch->initial_state == SQ_BAD ? "bad" : "good");
		fprintf(out, "%schannel.start = %s\n", prefix, ch->start == SQ_START_RUNNING ? "running" : "fresh");
		for (int s = 0; s < SQ_STATES; s++) {
			fprintf(out, "%schannel.%s = ", prefix, s == SQ_GOOD ? "good" : "bad");
			write_dist(out, &ch->length[s]);
			fputc('\n', out);
		}
	}
	write_outages(out, prefix, "channel", &cfg->link.outages);
	sq_error_draws_write(out, prefix, ch);
	write_direction(out, prefix, "down", &cfg->link.dir[SQ_DOWN], cfg->capacity_path[SQ_DOWN]);
	sq_router_write(out, prefix, "down", &cfg->link.dir[SQ_DOWN].router);
	write_direction(out, prefix, "up", &cfg->link.dir[SQ_UP], cfg->capacity_path[SQ_UP]);
	sq_router_write(out, prefix, "up", &cfg->link.dir[SQ_UP].router);
	write_cell(out, prefix, cfg);
}

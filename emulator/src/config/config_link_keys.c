/* The keys of the process, [channel], [down] and [up] sections (emulator/CONFIG.md). */
#include "config_link_keys.h"

#include <ctype.h>
#include <string.h>

#include "config.h"
#include "config_netem.h"
#include "config_text.h"
#include "host_port.h"
#include "value_parse.h"

/* --- process keys ------------------------------------------------------------------ */

static const char *set_listen(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	struct sockaddr_storage ss;
	socklen_t len;
	if (strlen(v) >= sizeof(cfg->listen_text) || !sq_parse_numeric_endpoint(v, true, &ss, &len))
		return "expected ADDR:PORT like 0.0.0.0:5300 or [::1]:5300";
	cfg->listen = ss;
	cfg->listen_len = len;
	strcpy(cfg->listen_text, v);
	return NULL;
}

static const char *set_token(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	/* The runner's files say where the token is not: it comes with --token-file. */
	if (strcmp(v, SQ_TOKEN_REDACTED) == 0)
		return NULL;
	uint64_t t = 0;
	size_t n = 0;
	for (; v[n]; n++) {
		if (!isxdigit((unsigned char)v[n]) || n >= 16)
			return "expected exactly 16 hex digits";
		int c = tolower((unsigned char)v[n]);
		t = t << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	if (n != 16)
		return "expected exactly 16 hex digits";
	cfg->token = t;
	cfg->token_set = true;
	return NULL;
}

/* A non-empty path that fits into out[size]; else `expected`. */
static const char *copy_path(char *out, size_t size, const char *v, const char *expected)
{
	if (!*v || strlen(v) >= size)
		return expected;
	strcpy(out, v);
	return NULL;
}

static const char *set_log(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	const char *err = copy_path(cfg->log_path, sizeof cfg->log_path, v, "expected a file path");
	if (err == NULL)
		cfg->log_set = true;
	return err;
}

static const char *set_control(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return copy_path(cfg->control_path, sizeof cfg->control_path, v,
			 "expected the path of a Unix socket to create (at most 107 bytes)");
}

static const char *set_seed(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (!sq_parse_count(v, UINT64_MAX, &cfg->link.seed))
		return "expected a decimal integer in [0, 18446744073709551615]";
	cfg->seed_set = true;
	return NULL;
}

static const char *set_replication(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	uint64_t r;
	if (!sq_parse_count(v, UINT32_MAX, &r))
		return "expected a decimal integer in [0, 4294967295]";
	cfg->link.replication = (uint32_t)r;
	return NULL;
}

static const char *set_positive_duration(sq_time_us *out, const char *v)
{
	sq_time_us t;
	if (!sq_parse_duration(v, &t) || t <= 0)
		return "expected a duration > 0 like 1s or 500ms (units us, ms, s)";
	*out = t;
	return NULL;
}

static const char *set_keepalive(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return set_positive_duration(&cfg->keepalive, v);
}

static const char *set_peer_timeout(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return set_positive_duration(&cfg->peer_timeout, v);
}

/* Bounded: a packet held longer at the NPA would be a packet the link model no longer
 * sees, and 10 ms is far more than any wakeup this is meant to hide. */
#define SQ_RELEASE_AHEAD_MAX 10000

static const char *set_release_ahead(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	sq_time_us t;
	if (!sq_parse_duration(v, &t) || t < 0 || t > SQ_RELEASE_AHEAD_MAX)
		return "expected a duration from 0us (off) to 10ms like 200us";
	cfg->release_ahead = t;
	return NULL;
}

static const char *set_autostart(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (strcmp(v, "none") == 0)
		cfg->autostart = SQ_AUTOSTART_NONE;
	else if (strcmp(v, "peers") == 0)
		cfg->autostart = SQ_AUTOSTART_PEERS;
	else
		return "expected 'none' or 'peers'";
	return NULL;
}

/* --- channel keys ------------------------------------------------------------------ */

/* 0 for the first word, 1 for the second, -1 for anything else. */
static int which_of_two(const char *v, const char *first, const char *second)
{
	return strcmp(v, first) == 0 ? 0 : strcmp(v, second) == 0 ? 1 : -1;
}

static const char *set_initial(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	int bad = which_of_two(v, "good", "bad");
	if (bad < 0)
		return "expected 'good' or 'bad'";
	cfg->link.channel.initial_state = bad ? SQ_BAD : SQ_GOOD;
	return NULL;
}

static const char *set_start(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	int running = which_of_two(v, "fresh", "running");
	if (running < 0)
		return "expected 'fresh' or 'running'";
	cfg->link.channel.start = running ? SQ_START_RUNNING : SQ_START_FRESH;
	return NULL;
}

#define DIST_EXPECTED                                                                          \
	"expected fixed(D), uniform(D, D), exponential(MEAN) or "                              \
	"exponential(MEAN, min=D, max=D) with durations > 0 like 2s (min may be 0), min <= max"

/* Splits "name(a, b, c)" into name and up to max trimmed arguments, in place. */
static int split_call(char *s, char **name, char **args, int max)
{
	char *open = strchr(s, '(');
	size_t n = strlen(s);
	if (!open || n == 0 || s[n - 1] != ')')
		return -1;
	s[n - 1] = '\0';
	*open = '\0';
	*name = sq_config_trim(s);
	int count = 0;
	char *p = open + 1;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (count == max)
			return -1;
		args[count++] = sq_config_trim(p);
		if (!comma)
			break;
		p = comma + 1;
	}
	return count;
}

static bool parse_positive(const char *s, sq_time_us *t)
{
	return sq_parse_duration(s, t) && *t > 0;
}

static bool parse_exponential_bounds(struct sq_dist *d, char **args, int n)
{
	bool have_min = false, have_max = false;
	d->min = 0;
	d->max = SQ_DIST_NO_MAX;
	for (int i = 1; i < n; i++) {
		if (strncmp(args[i], "min=", 4) == 0 && !have_min) {
			if (!sq_parse_duration(sq_config_trim(args[i] + 4), &d->min))
				return false;
			have_min = true;
		} else if (strncmp(args[i], "max=", 4) == 0 && !have_max) {
			if (!parse_positive(sq_config_trim(args[i] + 4), &d->max))
				return false;
			have_max = true;
		} else {
			return false;
		}
	}
	d->truncated = n > 1;
	return d->min <= d->max;
}

static bool parse_dist(struct sq_dist *d, const char *v)
{
	char buf[SQ_CONFIG_MAX_LINE];
	char *name, *args[3];
	if (strlen(v) >= sizeof(buf))
		return false;
	strcpy(buf, v);
	int n = split_call(buf, &name, args, 3);
	if (n < 1)
		return false;
	memset(d, 0, sizeof(*d));
	if (strcmp(name, "fixed") == 0) {
		d->kind = SQ_DIST_FIXED;
		return n == 1 && parse_positive(args[0], &d->a);
	}
	if (strcmp(name, "uniform") == 0) {
		d->kind = SQ_DIST_UNIFORM;
		return n == 2 && parse_positive(args[0], &d->a) && parse_positive(args[1], &d->b) &&
		       d->a <= d->b;
	}
	if (strcmp(name, "exponential") == 0) {
		d->kind = SQ_DIST_EXPONENTIAL;
		return parse_positive(args[0], &d->a) && parse_exponential_bounds(d, args, n);
	}
	return false;
}

static const char *set_good(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return parse_dist(&cfg->link.channel.length[SQ_GOOD], v) ? NULL : DIST_EXPECTED;
}

static const char *set_bad(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return parse_dist(&cfg->link.channel.length[SQ_BAD], v) ? NULL : DIST_EXPECTED;
}

/* Outages (LINK_MODEL.md "Outages"): [channel] sets the link's, [down]/[up] a direction's own;
 * every and length come as a pair (config_file.c checks that both are there). */
static const char *set_outage(struct sq_outage_config *o, struct sq_dist *d, const char *v)
{
	o->enabled = true;
	return parse_dist(d, v) ? NULL : DIST_EXPECTED;
}

static const char *set_link_outage_every(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return set_outage(&cfg->link.outages, &cfg->link.outages.every, v);
}

static const char *set_link_outage_length(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return set_outage(&cfg->link.outages, &cfg->link.outages.length, v);
}

static const char *set_outage_every(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_outage_config *o = &cfg->link.dir[w->dir].outages;
	return set_outage(o, &o->every, v);
}

static const char *set_outage_length(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_outage_config *o = &cfg->link.dir[w->dir].outages;
	return set_outage(o, &o->length, v);
}

/* A path as the file names it, relative to the configuration file's directory. */
static bool resolve_path(const struct sq_emu_config *cfg, const char *v, size_t vlen, char *out)
{
	const char *slash = strrchr(cfg->source, '/');
	size_t dirlen = (v[0] != '/' && slash) ? (size_t)(slash - cfg->source) + 1 : 0;
	if (vlen == 0 || dirlen + vlen >= SQ_CONFIG_PATH_MAX)
		return false;
	memcpy(out, cfg->source, dirlen);
	memcpy(out + dirlen, v, vlen);
	out[dirlen + vlen] = '\0';
	return true;
}

static const char *set_trace(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	return resolve_path(cfg, v, strlen(v), cfg->trace_path) ? NULL : "expected a file path";
}

/* --- direction keys ---------------------------------------------------------------- */

static struct sq_direction_config *dirc(struct sq_emu_config *cfg, enum sq_dir dir)
{
	return &cfg->link.dir[dir];
}

#define SIZE_EXPECTED "expected a size in bytes like 576B"

/* 68 B: the smallest MTU of an IPv4 link (RFC 791), and the smallest a Linux TUN device
 * takes: the NPA receiving the direction sets its TUN to this MTU. */
static const char *set_mtu(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint32_t b;
	if (!sq_parse_size(v, &b) || b < 68 || b > 65535)
		return "expected a size in bytes in [68B, 65535B] like 576B (68B: the smallest IPv4 MTU)";
	dirc(cfg, w->dir)->mtu = b;
	return NULL;
}

static const char *set_send_buffer(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return sq_parse_size(v, &dirc(cfg, w->dir)->send_buffer) ? NULL : SIZE_EXPECTED;
}

static const char *set_recv_buffer(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return sq_parse_size(v, &dirc(cfg, w->dir)->recv_buffer) ? NULL : SIZE_EXPECTED;
}

static const char *set_overhead(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return sq_parse_size(v, &dirc(cfg, w->dir)->overhead) ? NULL : SIZE_EXPECTED;
}

#define RATE_EXPECTED                                                                          \
	"expected a rate like 64kbit (units bit, kbit, Mbit, Gbit) or 'unlimited', or a "      \
	"schedule like '0s:64kbit, 10s:32kbit' starting at 0s with increasing times"

static bool parse_rate_step(char *text, struct sq_rate_step *step)
{
	char *colon = strchr(text, ':');
	if (!colon)
		return false;
	*colon = '\0';
	return sq_parse_duration(sq_config_trim(text), &step->at_us) && sq_parse_rate(sq_config_trim(colon + 1), &step->rate_bps);
}

/* The model can hold packets through an outage that never ends; a configured link must not:
 * every replication would run into its timeout with the packets still inside. */
#define LAST_RATE_ZERO "the last rate must be greater than zero (0bit is an outage, and it must end)"

#define MAHIMAHI_PREFIX "mahimahi("

/* bandwidth = mahimahi(FILE): a recorded capacity trace, read when the file is complete. */
static const char *set_capacity_trace(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	const char *path = v + strlen(MAHIMAHI_PREFIX);
	size_t len = strlen(path);
	if (len < 2 || path[len - 1] != ')' ||
	    !resolve_path(cfg, path, len - 1, cfg->capacity_path[w->dir]))
		return "expected mahimahi(FILE) with the path of a delivery-opportunity trace";
	return NULL;
}

static const char *set_bandwidth(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_rate_step *steps = cfg->rate[w->dir];
	if (strncmp(v, MAHIMAHI_PREFIX, strlen(MAHIMAHI_PREFIX)) == 0)
		return set_capacity_trace(cfg, w, v);
	if (!strchr(v, ':')) {
		steps[0].at_us = 0;
		if (!sq_parse_rate(v, &steps[0].rate_bps))
			return RATE_EXPECTED;
		dirc(cfg, w->dir)->rate_len = 1;
		return steps[0].rate_bps == 0 ? LAST_RATE_ZERO : NULL;
	}
	char buf[SQ_CONFIG_MAX_LINE];
	if (strlen(v) >= sizeof(buf))
		return RATE_EXPECTED;
	strcpy(buf, v);
	size_t n = 0;
	for (char *p = buf;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n == SQ_MAX_RATE_STEPS || !parse_rate_step(p, &steps[n]))
			return RATE_EXPECTED;
		if (n == 0 ? steps[0].at_us != 0 : steps[n].at_us <= steps[n - 1].at_us)
			return RATE_EXPECTED;
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	dirc(cfg, w->dir)->rate_len = n;
	return steps[n - 1].rate_bps == 0 ? LAST_RATE_ZERO : NULL;
}

static const char *set_delay(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!sq_parse_duration(v, &dirc(cfg, w->dir)->delay))
		return "expected a duration like 200ms (units us, ms, s)";
	return NULL;
}

static const char *set_error_good(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!sq_parse_probability(v, &dirc(cfg, w->dir)->error[SQ_GOOD]))
		return "expected a probability in [0, 1] like 0.01";
	return NULL;
}

static const char *set_error_bad(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!sq_parse_probability(v, &dirc(cfg, w->dir)->error[SQ_BAD]))
		return "expected a probability in [0, 1] like 0.63";
	return NULL;
}

/* The limit is the link model's (link_check.h), checked with the whole configuration. */
static const char *set_arq_retransmissions(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t n;
	if (!sq_parse_count(v, UINT32_MAX, &n))
		return "expected a count like 3 (a decimal integer)";
	dirc(cfg, w->dir)->arq_retransmissions = (uint32_t)n;
	return NULL;
}

static const char *set_arq_delay(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!sq_parse_duration(v, &dirc(cfg, w->dir)->arq_delay))
		return "expected a duration like 700ms (units us, ms, s)";
	return NULL;
}

static const char *set_in_order(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return sq_parse_bool(v, &dirc(cfg, w->dir)->in_order) ? NULL : "expected 'true' or 'false'";
}

/* --- tables -------------------------------------------------------------------------- */

const struct key_spec sq_process_keys[] = {
	{ "listen", set_listen, false },         { "token", set_token, false },
	{ "log", set_log, false },               { "seed", set_seed, false },
	{ "replication", set_replication, false }, { "keepalive", set_keepalive, false },
	{ "peer_timeout", set_peer_timeout, false }, { "autostart", set_autostart, false },
	{ "release_ahead", set_release_ahead, false },
	{ "control", set_control, false },
	{ NULL, NULL, false },
};

const struct key_spec sq_channel_keys[] = {
	{ "initial", set_initial, false }, { "start", set_start, false },
	{ "good", set_good, false },
	{ "bad", set_bad, false },         { "trace", set_trace, false },
	{ "outage_every", set_link_outage_every, false },
	{ "outage_length", set_link_outage_length, false },
	{ "error_draws", sq_set_error_draws, false }, { "error_grid", sq_set_error_grid, false },
	{ NULL, NULL, false },
};

const struct key_spec sq_direction_keys[] = {
	{ "mtu", set_mtu, true },
	{ "bandwidth", set_bandwidth, true },
	{ "delay", set_delay, true },
	{ "send_buffer", set_send_buffer, true },
	{ "recv_buffer", set_recv_buffer, false },
	{ "overhead", set_overhead, false },
	{ "error_good", set_error_good, false },
	{ "error_bad", set_error_bad, false },
	{ "arq_retransmissions", set_arq_retransmissions, false },
	{ "arq_delay", set_arq_delay, false },
	{ "in_order", set_in_order, false },
	{ "outage_every", set_outage_every, false },
	{ "outage_length", set_outage_length, false },
	{ "netem_loss", sq_set_netem_loss, false },
	{ "netem_delay", sq_set_netem_delay, false },
	{ "netem_distribution", sq_set_netem_distribution, false },
	{ "netem_reorder", sq_set_netem_reorder, false },
	{ "netem_gap", sq_set_netem_gap, false },
	{ "netem_duplicate", sq_set_netem_duplicate, false },
	{ "netem_corrupt", sq_set_netem_corrupt, false },
	{ NULL, NULL, false },
};



/* The router-stage sections of the configuration file (emulator/CONFIG.md,
 * "Router stage"): [DIR.router], [DIR.router.class.NAME], [DIR.router.filter.NAME]. */
#include "config_router.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router_discipline.h"
#include "router_dualpi2.h"
#include "router_fq_codel.h"
#include "router_pie.h"
#include "value_parse.h"

static struct sq_router_config *router(struct sq_emu_config *cfg, const struct where *w)
{
	return &cfg->link.dir[w->dir].router;
}

static struct sq_router_class *class_of(struct sq_emu_config *cfg, const struct where *w)
{
	return &router(cfg, w)->classes[w->index];
}

static struct sq_router_filter *filter_of(struct sq_emu_config *cfg, const struct where *w)
{
	return &router(cfg, w)->filters[w->index];
}

static struct sq_router_names *names(struct sq_emu_config *cfg, const struct where *w)
{
	return &cfg->router_names[w->dir];
}

static const struct sq_router_key *keys_of(unsigned d)
{
	return sq_router_discipline((enum sq_qdisc)d)->keys;
}

/* Where the value of a discipline's key is in a class. */
static const void *key_value(const struct sq_router_class *c, const struct sq_router_key *k)
{
	return (const char *)c + k->offset;
}

#define NAME_EXPECTED "expected a class name: a letter, then letters, digits, '_' or '-' (at most 31)"

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= SQ_ROUTER_NAME_MAX || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* --- [DIR.router] ---------------------------------------------------------------------- */

static const char *set_scheduler(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (strcmp(v, "priority") == 0)
		router(cfg, w)->scheduler = SQ_ROUTER_PRIORITY;
	else if (strcmp(v, "weighted") == 0)
		router(cfg, w)->scheduler = SQ_ROUTER_WEIGHTED;
	else
		return "expected 'priority' or 'weighted'";
	return NULL;
}

static const char *set_default(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!valid_name(v))
		return NAME_EXPECTED;
	strcpy(names(cfg, w)->default_class, v);
	names(cfg, w)->default_line = cfg->line;
	return NULL;
}

static const char *set_device_queue(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t n;
	if (!sq_parse_count(v, SQ_ROUTER_MAX_DEVICE_QUEUE, &n))
		return "expected a number of packets in [0, 65536] like 10 (0: no device queue)";
	router(cfg, w)->device_queue = (uint32_t)n;
	return NULL;
}

const struct key_spec sq_router_keys[] = {
	{ "scheduler", set_scheduler, false },
	{ "default", set_default, true },
	{ "device_queue", set_device_queue, false },
	{ NULL, NULL, false },
};

/* --- [DIR.router.class.NAME] ------------------------------------------------------------ */

static const char *set_priority(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t n;
	if (!sq_parse_count(v, 255, &n))
		return "expected a priority in [0, 255] (0 is served first)";
	class_of(cfg, w)->priority = (uint8_t)n;
	return NULL;
}

static const char *set_share(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t bps;
	if (!sq_parse_rate(v, &bps) || bps == 0 || bps == SQ_RATE_UNLIMITED)
		return "expected a rate > 0 like 32kbit (units bit, kbit, Mbit, Gbit)";
	class_of(cfg, w)->share_bps = bps;
	names(cfg, w)->share_set[w->index] = true;
	return NULL;
}

/* The messages below name the disciplines of the table (model/router_table.def); the
 * parser is single-threaded and copies a message before it asks for the next. */
static char message[256];

static const char *set_discipline(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (sq_router_discipline_named(v, &class_of(cfg, w)->discipline))
		return NULL;
	char names[192];
	sq_router_discipline_names(names, sizeof names, "'", " or ", -1);
	snprintf(message, sizeof message, "expected %s", names);
	return message;
}

static const char *set_limit(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_router_class *c = class_of(cfg, w);
	uint64_t packets;
	uint32_t bytes;
	if (sq_parse_count(v, UINT32_MAX, &packets)) {
		c->limit = (uint32_t)packets;
		names(cfg, w)->limit_is_bytes[w->index] = false;
	} else if (sq_parse_size(v, &bytes)) {
		c->limit = bytes;
		c->red.limit = bytes;
		names(cfg, w)->limit_is_bytes[w->index] = true;
	} else {
		return "expected packets like 20 (pfifo) or bytes like 6000B (bfifo, red)";
	}
	return NULL;
}

#define RED_SIZE_EXPECTED "expected a size in bytes > 0 like 2000B"

static const char *red_size(uint32_t *out, const char *v)
{
	if (!sq_parse_size(v, out) || *out == 0)
		return RED_SIZE_EXPECTED;
	return NULL;
}

static const char *set_red_min(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return red_size(&class_of(cfg, w)->red.min, v);
}

static const char *set_red_max(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return red_size(&class_of(cfg, w)->red.max, v);
}

static const char *set_red_avpkt(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return red_size(&class_of(cfg, w)->red.avpkt, v);
}

/* A value in (0, 1] into *out; else `expected`. */
static const char *red_fraction(double *out, const char *v, const char *expected)
{
	double p;
	if (!sq_parse_probability(v, &p) || p == 0.0)
		return expected;
	*out = p;
	return NULL;
}

static const char *set_red_max_p(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return red_fraction(&class_of(cfg, w)->red.max_p, v, "expected a probability in (0, 1] like 0.1");
}

static const char *set_red_w_q(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return red_fraction(&class_of(cfg, w)->red.w_q, v, "expected a weight in (0, 1] like 0.002");
}

static const char *flag_into(bool *out, const char *v)
{
	return sq_parse_bool(v, out) ? NULL : "expected 'true' or 'false'";
}

static const char *set_red_ecn(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->red.ecn, v);
}

/* A decimal in (0, max] (lo_open) or [0, max] into *out; else `expected`. */
static const char *decimal_in(double *out, const char *v, double max, bool lo_open, const char *expected)
{
	double d;
	if (!sq_parse_decimal(v, max, &d) || (lo_open && d == 0.0))
		return expected;
	*out = d;
	return NULL;
}

#define PIE_GAIN_EXPECTED "expected a gain in [0, 2] like 0.125"

/* A duration in [1us, max] into *out. */
static const char *duration_in(sq_time_us *out, const char *v, sq_time_us max, const char *expected)
{
	int64_t us;
	if (!sq_parse_duration(v, &us) || us < 1 || us > max)
		return expected;
	*out = us;
	return NULL;
}

#define AQM_TIME_EXPECTED "expected " SQ_EXPECT_DURATION ", from 1us to 10s"

static const char *set_pie_target(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->pie.target, v, SQ_PIE_MAX_US, AQM_TIME_EXPECTED);
}

static const char *set_pie_tupdate(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->pie.tupdate, v, SQ_PIE_MAX_US, AQM_TIME_EXPECTED);
}

static const char *set_pie_alpha(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return decimal_in(&class_of(cfg, w)->pie.alpha, v, 2.0, false, PIE_GAIN_EXPECTED);
}

static const char *set_pie_beta(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return decimal_in(&class_of(cfg, w)->pie.beta, v, 2.0, false, PIE_GAIN_EXPECTED);
}

static const char *set_pie_ecn(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->pie.ecn, v);
}

static const char *set_pie_bytemode(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->pie.bytemode, v);
}

static const char *set_dualpi2_target(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->dualpi2.target, v, SQ_DUALPI2_MAX_US, AQM_TIME_EXPECTED);
}

static const char *set_dualpi2_tupdate(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->dualpi2.tupdate, v, SQ_DUALPI2_MAX_US, AQM_TIME_EXPECTED);
}

static const char *set_dualpi2_step(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->dualpi2.step_thresh, v, SQ_DUALPI2_MAX_US, AQM_TIME_EXPECTED);
}

static const char *set_dualpi2_alpha(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return decimal_in(&class_of(cfg, w)->dualpi2.alpha, v, 32768.0, true, "expected a gain in Hz like 0.16");
}

static const char *set_dualpi2_beta(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return decimal_in(&class_of(cfg, w)->dualpi2.beta, v, 32768.0, true, "expected a gain in Hz like 3.2");
}

static const char *set_dualpi2_coupling(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	double *k = &class_of(cfg, w)->dualpi2.coupling;
	const char *bad = decimal_in(k, v, 255.0, true, "expected a coupling factor in [1, 255] like 2");
	return bad || *k >= 1.0 ? bad : "expected a coupling factor in [1, 255] like 2";
}

static const char *set_dualpi2_c_protection(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return decimal_in(&class_of(cfg, w)->dualpi2.c_protection, v, 100.0, false,
			  "expected a percentage in [0, 100] like 10");
}

static const char *set_dualpi2_overflow(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->dualpi2.overflow, v);
}

#define CODEL_TIME_EXPECTED "expected " SQ_EXPECT_DURATION ", at least 1us"

static const char *set_codel_target(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->codel.target, v, SQ_TIME_NEVER, CODEL_TIME_EXPECTED);
}

static const char *set_codel_interval(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->codel.interval, v, SQ_TIME_NEVER, CODEL_TIME_EXPECTED);
}

static const char *set_codel_ce_threshold(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	int64_t us;
	if (!sq_parse_duration(v, &us))
		return "expected " SQ_EXPECT_DURATION " (0us: off)";
	class_of(cfg, w)->codel.ce_threshold = us;
	return NULL;
}

static const char *set_codel_ecn(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->codel.ecn, v);
}

static const char *set_fq_codel_target(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->fq_codel.target, v, SQ_TIME_NEVER, CODEL_TIME_EXPECTED);
}

static const char *set_fq_codel_interval(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return duration_in(&class_of(cfg, w)->fq_codel.interval, v, SQ_TIME_NEVER, CODEL_TIME_EXPECTED);
}

static const char *set_fq_codel_ecn(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return flag_into(&class_of(cfg, w)->fq_codel.ecn, v);
}

/* A whole number in [lo, hi] into *out. */
static const char *count_in(uint32_t *out, const char *v, uint32_t lo, uint32_t hi, const char *expected)
{
	uint64_t n;
	if (!sq_parse_count(v, hi, &n) || n < lo)
		return expected;
	*out = (uint32_t)n;
	return NULL;
}

static const char *set_fq_codel_quantum(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return count_in(&class_of(cfg, w)->fq_codel.quantum, v, SQ_FQ_CODEL_MIN_QUANTUM, SQ_FQ_CODEL_MAX_QUANTUM,
			"expected IP bytes in [256, 1048576] like 1514");
}

static const char *set_fq_codel_flows(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	return count_in(&class_of(cfg, w)->fq_codel.flows, v, 1, SQ_FQ_CODEL_MAX_FLOWS,
			"expected a number of flows in [1, 65536] like 1024");
}

const struct key_spec sq_router_class_keys[] = {
	{ "priority", set_priority, false },
	{ "share", set_share, false },
	{ "discipline", set_discipline, true },
	{ "limit", set_limit, true },
	{ "red.min", set_red_min, false },
	{ "red.max", set_red_max, false },
	{ "red.avpkt", set_red_avpkt, false },
	{ "red.max_p", set_red_max_p, false },
	{ "red.w_q", set_red_w_q, false },
	{ "red.ecn", set_red_ecn, false },
	{ "codel.target", set_codel_target, false },
	{ "codel.interval", set_codel_interval, false },
	{ "codel.ecn", set_codel_ecn, false },
	{ "codel.ce_threshold", set_codel_ce_threshold, false },
	{ "fq_codel.target", set_fq_codel_target, false },
	{ "fq_codel.interval", set_fq_codel_interval, false },
	{ "fq_codel.ecn", set_fq_codel_ecn, false },
	{ "fq_codel.quantum", set_fq_codel_quantum, false },
	{ "fq_codel.flows", set_fq_codel_flows, false },
	{ "pie.target", set_pie_target, false },
	{ "pie.tupdate", set_pie_tupdate, false },
	{ "pie.alpha", set_pie_alpha, false },
	{ "pie.beta", set_pie_beta, false },
	{ "pie.ecn", set_pie_ecn, false },
	{ "pie.bytemode", set_pie_bytemode, false },
	{ "dualpi2.target", set_dualpi2_target, false },
	{ "dualpi2.tupdate", set_dualpi2_tupdate, false },
	{ "dualpi2.alpha", set_dualpi2_alpha, false },
	{ "dualpi2.beta", set_dualpi2_beta, false },
	{ "dualpi2.coupling", set_dualpi2_coupling, false },
	{ "dualpi2.step_thresh", set_dualpi2_step, false },
	{ "dualpi2.c_protection", set_dualpi2_c_protection, false },
	{ "dualpi2.overflow", set_dualpi2_overflow, false },
	{ NULL, NULL, false },
};

/* --- [DIR.router.filter.NAME] ----------------------------------------------------------- */

static const char *set_filter_class(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	if (!valid_name(v))
		return NAME_EXPECTED;
	strcpy(names(cfg, w)->filter_class[w->index], v);
	names(cfg, w)->filter_class_line[w->index] = cfg->line;
	return NULL;
}

/* DSCP code points by name (RFC 2474, 2597, 3246, 5865). */
static bool dscp_value(const char *s, unsigned *out)
{
	uint64_t n;
	if (sq_parse_count(s, 63, &n)) {
		*out = (unsigned)n;
		return true;
	}
	if (strcmp(s, "EF") == 0 || strcmp(s, "BE") == 0 || strcmp(s, "VA") == 0) {
		*out = s[0] == 'E' ? 46 : s[0] == 'B' ? 0 : 44;
		return true;
	}
	if (s[0] == 'C' && s[1] == 'S' && s[2] >= '0' && s[2] <= '7' && !s[3]) {
		*out = (unsigned)(s[2] - '0') * 8;
		return true;
	}
	if (s[0] == 'A' && s[1] == 'F' && s[2] >= '1' && s[2] <= '4' && s[3] >= '1' && s[3] <= '3' && !s[4]) {
		*out = (unsigned)(s[2] - '0') * 8 + (unsigned)(s[3] - '0') * 2;
		return true;
	}
	return false;
}

static const char *set_dscp(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	static const char *const expected =
		"expected DSCP values separated by commas: 0-63, EF, BE, VA, CS0-CS7, AF11-AF43";
	char buf[256];
	if (strlen(v) >= sizeof(buf))
		return expected;
	strcpy(buf, v);
	uint64_t mask = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		char *end = tok + strlen(tok);
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = '\0';
		unsigned d;
		if (!dscp_value(tok, &d))
			return expected;
		mask |= UINT64_C(1) << d;
	}
	if (mask == 0)
		return expected;
	filter_of(cfg, w)->dscp_mask = mask;
	return NULL;
}

static const char *set_protocol(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	static const struct { const char *name; uint8_t number; } known[] = {
		{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "icmp6", 58 }, { "sctp", 132 },
	};
	struct sq_router_filter *f = filter_of(cfg, w);
	uint64_t n;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(v, known[i].name) == 0) {
			f->match_proto = true;
			f->proto = known[i].number;
			return NULL;
		}
	}
	if (!sq_parse_count(v, 255, &n))
		return "expected tcp, udp, icmp, icmp6, sctp or a protocol number 0-255";
	f->match_proto = true;
	f->proto = (uint8_t)n;
	return NULL;
}

static bool parse_port_range(const char *v, uint16_t *lo, uint16_t *hi)
{
	char buf[32];
	uint64_t a, b;
	if (strlen(v) >= sizeof(buf))
		return false;
	strcpy(buf, v);
	char *dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (!sq_parse_count(buf, 65535, &a))
		return false;
	b = a;
	if (dash && !sq_parse_count(dash + 1, 65535, &b))
		return false;
	if (a > b)
		return false;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return true;
}

#define PORT_EXPECTED "expected a port 0-65535 or a range like 5000-5010"

/* A port or a range into [*lo, *hi], and the filter then matches on it (*match). */
static const char *ports(const char *v, uint16_t *lo, uint16_t *hi, bool *match)
{
	if (!parse_port_range(v, lo, hi))
		return PORT_EXPECTED;
	*match = true;
	return NULL;
}

static const char *set_sport(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_router_filter *f = filter_of(cfg, w);
	return ports(v, &f->sport_min, &f->sport_max, &f->match_sport);
}

static const char *set_dport(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_router_filter *f = filter_of(cfg, w);
	return ports(v, &f->dport_min, &f->dport_max, &f->match_dport);
}

const struct key_spec sq_router_filter_keys[] = {
	{ "class", set_filter_class, true },
	{ "dscp", set_dscp, false },
	{ "protocol", set_protocol, false },
	{ "sport", set_sport, false },
	{ "dport", set_dport, false },
	{ NULL, NULL, false },
};

/* --- sections ------------------------------------------------------------------------- */

const char *sq_router_add_class(struct sq_emu_config *cfg, enum sq_dir dir, const char *name, size_t *index)
{
	struct sq_router_config *r = &cfg->link.dir[dir].router;
	if (!valid_name(name))
		return NAME_EXPECTED;
	for (size_t i = 0; i < r->n_classes; i++)
		if (strcmp(r->classes[i].name, name) == 0)
			return "section appears twice";
	if (r->n_classes == SQ_ROUTER_MAX_CLASSES)
		return "too many classes (at most 16)";
	*index = r->n_classes++;
	struct sq_router_class *c = &r->classes[*index];
	memset(c, 0, sizeof(*c));
	strcpy(c->name, name);
	for (unsigned d = 0; d < SQ_QDISCS; d++)
		for (const struct sq_router_key *k = keys_of(d); k && k->name; k++)
			if (k->kind == SQ_RKEY_REAL)
				*(double *)((char *)c + k->offset) = k->default_value;
			else if (k->kind == SQ_RKEY_TIME)
				*(sq_time_us *)((char *)c + k->offset) = (sq_time_us)k->default_value;
			else if (k->kind == SQ_RKEY_COUNT)
				*(uint32_t *)((char *)c + k->offset) = (uint32_t)k->default_value;
			else if (k->kind == SQ_RKEY_BOOL)
				*(bool *)((char *)c + k->offset) = k->default_value != 0.0;
	return NULL;
}

const char *sq_router_add_filter(struct sq_emu_config *cfg, enum sq_dir dir, const char *name, size_t *index)
{
	struct sq_router_config *r = &cfg->link.dir[dir].router;
	if (!valid_name(name))
		return "expected a filter name: a letter, then letters, digits, '_' or '-' (at most 31)";
	for (size_t i = 0; i < r->n_filters; i++)
		if (strcmp(r->filters[i].name, name) == 0)
			return "section appears twice";
	if (r->n_filters == SQ_ROUTER_MAX_FILTERS)
		return "too many filters (at most 32)";
	*index = r->n_filters++;
	struct sq_router_filter *f = &r->filters[*index];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, name);
	return NULL;
}

/* "limit: bfifo and red count bytes, expected a size like 6000B" */
static const char *limit_unit_message(bool in_bytes)
{
	char names[192];
	size_t n = sq_router_discipline_names(names, sizeof names, "", " and ", in_bytes);
	snprintf(message, sizeof message, "limit: %s %s %s, expected %s", names, n == 1 ? "counts" : "count",
		 in_bytes ? "bytes" : "packets", in_bytes ? "a size like 6000B" : "a number like 20");
	return message;
}

/* A key of discipline d's own that class c has set, or NULL. */
static const struct sq_router_key *key_set(const struct sq_router_class *c, unsigned d)
{
	for (const struct sq_router_key *k = keys_of(d); k && k->name; k++) {
		const void *v = key_value(c, k);
		if ((k->kind == SQ_RKEY_BYTES && *(const uint32_t *)v) ||
		    (k->kind == SQ_RKEY_BOOL && *(const bool *)v != (k->default_value != 0.0)) ||
		    (k->kind == SQ_RKEY_TIME && *(const sq_time_us *)v != (sq_time_us)k->default_value) ||
		    (k->kind == SQ_RKEY_COUNT && *(const uint32_t *)v != (uint32_t)k->default_value))
			return k;
	}
	return NULL;
}

/* "red.min, red.max, red.avpkt: required with discipline = red" if one is missing. */
static const char *required_keys_message(const struct sq_router_class *c)
{
	const struct sq_router_key *keys = keys_of(c->discipline);
	bool missing = false;
	size_t len = 0;
	message[0] = '\0';
	for (const struct sq_router_key *k = keys; k && k->name; k++) {
		if (k->kind != SQ_RKEY_BYTES)
			continue;
		missing |= *(const uint32_t *)key_value(c, k) == 0;
		int n = snprintf(message + len, sizeof message - len, "%s%s", len ? ", " : "", k->name);
		len = n < 0 || (size_t)n >= sizeof message - len ? sizeof message - 1 : len + (size_t)n;
	}
	if (!missing)
		return NULL;
	snprintf(message + len, sizeof message - len, ": required with discipline = %s",
		 sq_router_discipline(c->discipline)->name);
	return message;
}

const char *sq_router_close_class(const struct sq_emu_config *cfg, const struct where *w)
{
	const struct sq_router_class *c = &cfg->link.dir[w->dir].router.classes[w->index];
	bool bytes = cfg->router_names[w->dir].limit_is_bytes[w->index];
	if (sq_router_discipline(c->discipline)->limit_in_bytes != bytes)
		return limit_unit_message(!bytes);
	for (unsigned d = 0; d < SQ_QDISCS; d++) {
		const struct sq_router_key *k = d == c->discipline ? NULL : key_set(c, d);
		if (k) {
			snprintf(message, sizeof message, "%s: only with discipline = %s", k->name,
				 sq_router_discipline((enum sq_qdisc)d)->name);
			return message;
		}
	}
	return required_keys_message(c);
}

const char *sq_router_close_filter(const struct sq_emu_config *cfg, const struct where *w)
{
	const struct sq_router_filter *f = &cfg->link.dir[w->dir].router.filters[w->index];
	if ((f->match_sport || f->match_dport) && !f->match_proto)
		return "sport, dport: need protocol in the same filter";
	if (!f->dscp_mask && !f->match_proto)
		return "dscp, protocol: a filter needs at least one of them";
	return NULL;
}

static bool find_class(const struct sq_router_config *r, const char *name, size_t *index)
{
	for (size_t i = 0; i < r->n_classes; i++) {
		if (strcmp(r->classes[i].name, name) == 0) {
			*index = i;
			return true;
		}
	}
	return false;
}

static void class_list(const struct sq_router_config *r, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < r->n_classes && len < n; i++) {
		int k = snprintf(out + len, n - len, "%s%s", i ? ", " : "", r->classes[i].name);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

bool sq_router_finish(struct sq_emu_config *cfg, enum sq_dir dir, char *msg, size_t msglen, unsigned *line)
{
	struct sq_router_config *r = &cfg->link.dir[dir].router;
	struct sq_router_names *nm = &cfg->router_names[dir];
	const char *dn = dir == SQ_DOWN ? "down" : "up";
	char defined[SQ_ROUTER_MAX_CLASSES * SQ_ROUTER_NAME_MAX];
	*line = 0;
	if (!nm->present) {
		if (r->n_classes || r->n_filters) {
			snprintf(msg, msglen, "[%s.router]: missing, classes and filters need it", dn);
			return false;
		}
		return true;
	}
	if (r->n_classes == 0) {
		snprintf(msg, msglen, "[%s.router.class.NAME]: missing, the router needs at least one class", dn);
		return false;
	}
	class_list(r, defined, sizeof(defined));
	if (!find_class(r, nm->default_class, &r->default_class)) {
		*line = nm->default_line;
		snprintf(msg, msglen, "%s.router.default: '%s' names no class; defined classes are %s", dn,
			 nm->default_class, defined);
		return false;
	}
	for (size_t i = 0; i < r->n_filters; i++) {
		if (!find_class(r, nm->filter_class[i], &r->filters[i].class_index)) {
			*line = nm->filter_class_line[i];
			snprintf(msg, msglen, "%s.router.filter.%s.class: '%s' names no class; defined classes are %s",
				 dn, r->filters[i].name, nm->filter_class[i], defined);
			return false;
		}
	}
	for (size_t i = 0; i < r->n_classes && r->scheduler == SQ_ROUTER_WEIGHTED; i++) {
		if (!nm->share_set[i]) {
			snprintf(msg, msglen, "%s.router.class.%s.share: missing, scheduler = weighted needs a share for every class",
				 dn, r->classes[i].name);
			return false;
		}
	}
	r->enabled = true;
	return true;
}

/* --- canonical output ------------------------------------------------------------------ */

static void write_key(FILE *out, const char *p, const struct sq_router_class *c, const struct sq_router_key *k)
{
	const void *v = key_value(c, k);
	fprintf(out, "%s%s.%s = ", p, c->name, k->name);
	switch (k->kind) {
	case SQ_RKEY_BYTES:
		fprintf(out, "%" PRIu32 "B\n", *(const uint32_t *)v);
		break;
	case SQ_RKEY_REAL:
		fprintf(out, "%.17g\n", *(const double *)v);
		break;
	case SQ_RKEY_BOOL:
		fprintf(out, "%s\n", *(const bool *)v ? "true" : "false");
		break;
	case SQ_RKEY_TIME:
		fprintf(out, "%" PRId64 "us\n", (int64_t)*(const sq_time_us *)v);
		break;
	case SQ_RKEY_COUNT:
		fprintf(out, "%" PRIu32 "\n", *(const uint32_t *)v);
		break;
	}
}

static void write_class(FILE *out, const char *p, const struct sq_router_class *c)
{
	const struct sq_router_discipline *ops = sq_router_discipline(c->discipline);
	fprintf(out, "%s%s.priority = %u\n", p, c->name, c->priority);
	if (c->share_bps)
		fprintf(out, "%s%s.share = %" PRIu64 "bit\n", p, c->name, c->share_bps);
	fprintf(out, "%s%s.discipline = %s\n", p, c->name, ops->name);
	fprintf(out, "%s%s.limit = %" PRIu32 "%s\n", p, c->name, c->limit, ops->limit_in_bytes ? "B" : "");
	for (const struct sq_router_key *k = ops->keys; k && k->name; k++)
		write_key(out, p, c, k);
}

static void write_filter(FILE *out, const char *p, const struct sq_router_config *r,
			 const struct sq_router_filter *f)
{
	fprintf(out, "%s%s.class = %s\n", p, f->name, r->classes[f->class_index].name);
	if (f->dscp_mask) {
		fprintf(out, "%s%s.dscp = ", p, f->name);
		const char *sep = "";
		for (unsigned d = 0; d < 64; d++) {
			if (f->dscp_mask & (UINT64_C(1) << d)) {
				fprintf(out, "%s%u", sep, d);
				sep = ", ";
			}
		}
		fputc('\n', out);
	}
	if (f->match_proto)
		fprintf(out, "%s%s.protocol = %u\n", p, f->name, f->proto);
	if (f->match_sport)
		fprintf(out, "%s%s.sport = %u-%u\n", p, f->name, f->sport_min, f->sport_max);
	if (f->match_dport)
		fprintf(out, "%s%s.dport = %u-%u\n", p, f->name, f->dport_min, f->dport_max);
}

void sq_router_write(FILE *out, const char *prefix, const char *dir_name, const struct sq_router_config *r)
{
	if (!r->enabled)
		return;
	fprintf(out, "%s%s.router.scheduler = %s\n", prefix, dir_name,
		r->scheduler == SQ_ROUTER_WEIGHTED ? "weighted" : "priority");
	fprintf(out, "%s%s.router.default = %s\n", prefix, dir_name, r->classes[r->default_class].name);
	fprintf(out, "%s%s.router.device_queue = %" PRIu32 "\n", prefix, dir_name, r->device_queue);
	char p[256];
	snprintf(p, sizeof(p), "%s%s.router.class.", prefix, dir_name);
	for (size_t i = 0; i < r->n_classes; i++)
		write_class(out, p, &r->classes[i]);
	snprintf(p, sizeof(p), "%s%s.router.filter.", prefix, dir_name);
	for (size_t i = 0; i < r->n_filters; i++)
		write_filter(out, p, r, &r->filters[i]);
}

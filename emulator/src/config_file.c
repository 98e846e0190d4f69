/* The configuration file parser (format: emulator/CONFIG.md). */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config_keys.h"
#include "units.h"

#define MAX_LINE 4096
#define MAX_SHOWN_VALUE 80

/* The fixed sections, then the router ones ([DIR.router], [DIR.router.class.NAME],
 * [DIR.router.filter.NAME]) of which there may be several. */
enum section { SEC_PROCESS, SEC_CHANNEL, SEC_DOWN, SEC_UP, SEC_ROUTER, SEC_CLASS, SEC_FILTER, SECTIONS };
#define FIXED_SECTIONS SEC_ROUTER
static const char *const section_names[FIXED_SECTIONS] = { "", "channel", "down", "up" };


/* --- process keys ------------------------------------------------------------------ */

static const char *set_listen(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	static const char *const expected = "expected ADDR:PORT like 0.0.0.0:5300 or [::1]:5300";
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(v, ':');
	if (!colon || (size_t)(colon - v) >= sizeof(host) || colon == v)
		return expected;
	memcpy(host, v, (size_t)(colon - v));
	host[colon - v] = '\0';
	uint64_t port;
	if (!sq_parse_count(colon + 1, 65535, &port))
		return expected;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	size_t hl = strlen(host);
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return expected;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		cfg->listen_len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return expected;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		cfg->listen_len = sizeof(*a4);
	}
	if (strlen(v) >= sizeof(cfg->listen_text))
		return expected;
	cfg->listen = ss;
	strcpy(cfg->listen_text, v);
	return NULL;
}

static const char *set_token(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
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

static const char *set_log(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (!*v || strlen(v) >= sizeof(cfg->log_path))
		return "expected a file path";
	strcpy(cfg->log_path, v);
	cfg->log_set = true;
	return NULL;
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

static const char *set_initial(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (strcmp(v, "good") == 0)
		cfg->link.channel.initial_state = SQ_GOOD;
	else if (strcmp(v, "bad") == 0)
		cfg->link.channel.initial_state = SQ_BAD;
	else
		return "expected 'good' or 'bad'";
	return NULL;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
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
	*name = trim(s);
	int count = 0;
	char *p = open + 1;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (count == max)
			return -1;
		args[count++] = trim(p);
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
			if (!sq_parse_duration(trim(args[i] + 4), &d->min))
				return false;
			have_min = true;
		} else if (strncmp(args[i], "max=", 4) == 0 && !have_max) {
			if (!parse_positive(trim(args[i] + 4), &d->max))
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
	char buf[MAX_LINE];
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

static const char *set_trace(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	const char *slash = strrchr(cfg->source, '/');
	size_t dirlen = (v[0] != '/' && slash) ? (size_t)(slash - cfg->source) + 1 : 0;
	if (!*v || dirlen + strlen(v) >= sizeof(cfg->trace_path))
		return "expected a file path";
	memcpy(cfg->trace_path, cfg->source, dirlen);
	strcpy(cfg->trace_path + dirlen, v);
	return NULL;
}

/* --- direction keys ---------------------------------------------------------------- */

static struct sq_direction_config *dirc(struct sq_emu_config *cfg, enum sq_dir dir)
{
	return &cfg->link.dir[dir];
}

#define SIZE_EXPECTED "expected a size in bytes like 576B"

static const char *set_mtu(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint32_t b;
	if (!sq_parse_size(v, &b) || b < 20 || b > 65535)
		return "expected a size in bytes in [20B, 65535B] like 576B";
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
	return sq_parse_duration(trim(text), &step->at_us) && sq_parse_rate(trim(colon + 1), &step->rate_bps);
}

static const char *set_bandwidth(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	struct sq_rate_step *steps = cfg->rate[w->dir];
	if (!strchr(v, ':')) {
		steps[0].at_us = 0;
		if (!sq_parse_rate(v, &steps[0].rate_bps))
			return RATE_EXPECTED;
		dirc(cfg, w->dir)->rate_len = 1;
		return NULL;
	}
	char buf[MAX_LINE];
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
	return NULL;
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

static const char *set_arq_retransmissions(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	uint64_t n;
	if (!sq_parse_count(v, 1000, &n))
		return "expected a count in [0, 1000]";
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

static const struct key_spec process_keys[] = {
	{ "listen", set_listen, false },         { "token", set_token, false },
	{ "log", set_log, false },               { "seed", set_seed, false },
	{ "replication", set_replication, false }, { "keepalive", set_keepalive, false },
	{ "peer_timeout", set_peer_timeout, false }, { "autostart", set_autostart, false },
	{ NULL, NULL, false },
};

static const struct key_spec channel_keys[] = {
	{ "initial", set_initial, false }, { "good", set_good, false },
	{ "bad", set_bad, false },         { "trace", set_trace, false },
	{ NULL, NULL, false },
};

static const struct key_spec direction_keys[] = {
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
	{ NULL, NULL, false },
};

static const struct key_spec *const section_keys[SECTIONS] = {
	process_keys, channel_keys, direction_keys, direction_keys,
	sq_router_keys, sq_router_class_keys, sq_router_filter_keys,
};

#define MAX_KEYS SQ_MAX_SECTION_KEYS

/* --- the parser ---------------------------------------------------------------------- */

struct parser {
	struct sq_emu_config *cfg;
	const char *name;
	unsigned line;
	enum section section;
	struct where where;          /* of a router section */
	char label[96];              /* "down", "down.router.class.EF": prefix of keys in messages */
	bool section_seen[SECTIONS];
	bool key_seen[SECTIONS][MAX_KEYS];
	char *err;
	size_t errlen;
};

static bool fail(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static const char *sq_dir_label(enum sq_dir d)
{
	return d == SQ_UP ? "up" : "down";
}

static void full_key(char *out, size_t n, const struct parser *p, const char *key)
{
	if (p->section == SEC_PROCESS)
		snprintf(out, n, "%s", key);
	else
		snprintf(out, n, "%s.%s", p->label, key);
}

/* Checks a router section that ends (at the next header or the end of the file). */
static bool close_section(struct parser *p)
{
	if (p->section < SEC_ROUTER)
		return true;
	const struct key_spec *keys = section_keys[p->section];
	for (int i = 0; keys[i].name; i++) {
		if (keys[i].required && !p->key_seen[p->section][i]) {
			snprintf(p->err, p->errlen, "%s: %s.%s: missing required key", p->name, p->label, keys[i].name);
			return false;
		}
	}
	const char *problem = p->section == SEC_CLASS ? sq_router_close_class(p->cfg, &p->where)
			      : p->section == SEC_FILTER ? sq_router_close_filter(p->cfg, &p->where) : NULL;
	if (problem) {
		snprintf(p->err, p->errlen, "%s: %s.%s", p->name, p->label, problem);
		return false;
	}
	return true;
}

/* [down.router], [up.router.class.EF], [down.router.filter.voip] */
static bool parse_router_section(struct parser *p, const char *name)
{
	enum sq_dir dir;
	const char *rest;
	if (strncmp(name, "down.router", 11) == 0) {
		dir = SQ_DOWN;
		rest = name + 11;
	} else if (strncmp(name, "up.router", 9) == 0) {
		dir = SQ_UP;
		rest = name + 9;
	} else {
		return fail(p, "[%.80s]: unknown section, expected [channel], [down], [up], [down.router], "
			    "[down.router.class.NAME], [down.router.filter.NAME] (or up.)", name);
	}
	const char *problem = NULL;
	p->where = (struct where){ dir, 0 };
	if (*rest == '\0') {
		struct sq_router_names *nm = &p->cfg->router_names[dir];
		problem = nm->present ? "section appears twice" : NULL;
		nm->present = true;
		p->section = SEC_ROUTER;
	} else if (strncmp(rest, ".class.", 7) == 0) {
		problem = sq_router_add_class(p->cfg, dir, rest + 7, &p->where.index);
		p->section = SEC_CLASS;
	} else if (strncmp(rest, ".filter.", 8) == 0) {
		problem = sq_router_add_filter(p->cfg, dir, rest + 8, &p->where.index);
		p->section = SEC_FILTER;
	} else {
		return fail(p, "[%.80s]: unknown section, expected [%s.router], [%s.router.class.NAME] or "
			    "[%s.router.filter.NAME]", name, sq_dir_label(dir), sq_dir_label(dir), sq_dir_label(dir));
	}
	if (problem)
		return fail(p, "[%.80s]: %s", name, problem);
	snprintf(p->label, sizeof(p->label), "%s", name);
	memset(p->key_seen[p->section], 0, sizeof(p->key_seen[p->section]));
	return true;
}

static bool parse_section(struct parser *p, char *text)
{
	size_t n = strlen(text);
	if (n < 2 || text[n - 1] != ']')
		return fail(p, "expected a section header [channel], [down] or [up], got '%.80s'", text);
	text[n - 1] = '\0';
	char *name = trim(text + 1);
	if (!close_section(p))
		return false;
	for (int s = SEC_CHANNEL; s < FIXED_SECTIONS; s++) {
		if (strcmp(name, section_names[s]) != 0)
			continue;
		if (p->section_seen[s])
			return fail(p, "[%s]: section appears twice", name);
		p->section_seen[s] = true;
		p->section = (enum section)s;
		snprintf(p->label, sizeof(p->label), "%s", name);
		return true;
	}
	return parse_router_section(p, name);
}

static bool parse_assignment(struct parser *p, char *text)
{
	char *eq = strchr(text, '=');
	if (!eq)
		return fail(p, "expected 'key = value' or a [section], got '%.80s'", text);
	*eq = '\0';
	char *key = trim(text), *value = trim(eq + 1);
	char shown[160];
	full_key(shown, sizeof(shown), p, key);
	const struct key_spec *keys = section_keys[p->section];
	for (int i = 0; keys[i].name; i++) {
		if (strcmp(keys[i].name, key) != 0)
			continue;
		if (p->key_seen[p->section][i])
			return fail(p, "%s: key appears twice", shown);
		p->key_seen[p->section][i] = true;
		struct where w = p->section >= SEC_ROUTER ? p->where
						       : (struct where){ p->section == SEC_UP ? SQ_UP : SQ_DOWN, 0 };
		p->cfg->line = p->line;
		const char *expected = keys[i].set(p->cfg, &w, value);
		if (expected)
			return fail(p, "%s: %s, got '%.*s'", shown, expected, MAX_SHOWN_VALUE, value);
		return true;
	}
	return fail(p, "%.80s: unknown key", shown);
}

static bool parse_line(struct parser *p, const char *start, size_t len)
{
	char text[MAX_LINE];
	if (len >= sizeof(text))
		return fail(p, "line longer than %d bytes", MAX_LINE - 1);
	if (memchr(start, '\0', len))
		return fail(p, "line contains a NUL byte");
	memcpy(text, start, len);
	text[len] = '\0';
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	char *t = trim(text);
	if (!*t)
		return true;
	return t[0] == '[' ? parse_section(p, t) : parse_assignment(p, t);
}

static bool key_was_seen(const struct parser *p, enum section s, const char *key)
{
	const struct key_spec *keys = section_keys[s];
	for (int i = 0; keys[i].name; i++)
		if (strcmp(keys[i].name, key) == 0)
			return p->key_seen[s][i];
	return false;
}

static bool check_channel(struct parser *p)
{
	bool trace = key_was_seen(p, SEC_CHANNEL, "trace");
	bool good = key_was_seen(p, SEC_CHANNEL, "good"), bad = key_was_seen(p, SEC_CHANNEL, "bad");
	if (trace && (good || bad || key_was_seen(p, SEC_CHANNEL, "initial"))) {
		snprintf(p->err, p->errlen,
			 "%s: channel.trace: cannot be combined with channel.good, channel.bad or channel.initial",
			 p->name);
		return false;
	}
	if (!trace && !(good && bad)) {
		snprintf(p->err, p->errlen,
			 "%s: channel.%s: missing, expected a distribution like exponential(10s) (or channel.trace = FILE)",
			 p->name, good ? "bad" : "good");
		return false;
	}
	return true;
}

static bool check_routers(struct parser *p)
{
	for (int d = 0; d < SQ_DIRS; d++) {
		char msg[512];
		unsigned line;
		if (!sq_router_finish(p->cfg, (enum sq_dir)d, msg, sizeof(msg), &line)) {
			if (line)
				snprintf(p->err, p->errlen, "%s:%u: %s", p->name, line, msg);
			else
				snprintf(p->err, p->errlen, "%s: %s", p->name, msg);
			return false;
		}
	}
	return true;
}

static bool check_required(struct parser *p)
{
	for (int s = SEC_CHANNEL; s < FIXED_SECTIONS; s++) {
		if (!p->section_seen[s]) {
			snprintf(p->err, p->errlen, "%s: [%s]: missing section", p->name, section_names[s]);
			return false;
		}
	}
	for (int s = SEC_DOWN; s <= SEC_UP; s++) {
		const struct key_spec *keys = section_keys[s];
		for (int i = 0; keys[i].name; i++) {
			if (keys[i].required && !p->key_seen[s][i]) {
				snprintf(p->err, p->errlen, "%s: %s.%s: missing required key", p->name,
					 section_names[s], keys[i].name);
				return false;
			}
		}
	}
	if (p->cfg->peer_timeout <= p->cfg->keepalive) {
		snprintf(p->err, p->errlen, "%s: peer_timeout: must be longer than keepalive (%" PRId64
			 "us), got %" PRId64 "us", p->name, p->cfg->keepalive, p->cfg->peer_timeout);
		return false;
	}
	return check_channel(p) && check_routers(p);
}

void sq_config_init(struct sq_emu_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	set_listen(cfg, &(struct where){ SQ_DOWN, 0 }, "0.0.0.0:5300");
	cfg->keepalive = 1000000;
	cfg->peer_timeout = 5000000;
	cfg->autostart = SQ_AUTOSTART_NONE;
	cfg->link.channel.initial_state = SQ_GOOD;
	for (int d = 0; d < SQ_DIRS; d++) {
		struct sq_direction_config *dc = &cfg->link.dir[d];
		dc->recv_buffer = 65536;
		dc->in_order = true;
		dc->rate = cfg->rate[d];
		dc->rate_len = 1;
	}
	snprintf(cfg->source, sizeof(cfg->source), "config");
}

void sq_config_release(struct sq_emu_config *cfg)
{
	free(cfg->trace);
	cfg->trace = NULL;
	cfg->link.channel.trace = NULL;
	cfg->link.channel.trace_len = 0;
}

bool sq_config_parse(struct sq_emu_config *cfg, const char *name, const char *buf, size_t len,
		     char *err, size_t errlen)
{
	struct parser p = { .cfg = cfg, .name = name, .section = SEC_PROCESS, .err = err, .errlen = errlen };
	snprintf(cfg->source, sizeof(cfg->source), "%s", name);
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		p.line++;
		if (!parse_line(&p, buf + pos, line_len))
			return false;
		pos += line_len + 1;
	}
	p.line = 0;
	return close_section(&p) && check_required(&p);
}

/* Reads a whole file into a NUL-terminated heap buffer. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	bool failed = ferror(f);
	fclose(f);
	if (!buf || failed) {
		snprintf(err, errlen, "%s: cannot read (too large or I/O error)", path);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

bool sq_config_load(struct sq_emu_config *cfg, const char *path, char *err, size_t errlen)
{
	size_t len;
	char *buf = read_file(path, &len, err, errlen);
	if (!buf)
		return false;
	bool ok = sq_config_parse(cfg, path, buf, len, err, errlen);
	free(buf);
	return ok && (cfg->trace_path[0] == '\0' || sq_config_load_trace(cfg, err, errlen));
}

bool sq_config_override(struct sq_emu_config *cfg, const char *key, const char *value,
			const char *origin, char *err, size_t errlen)
{
	for (int i = 0; process_keys[i].name; i++) {
		if (strcmp(process_keys[i].name, key) != 0)
			continue;
		const char *expected = process_keys[i].set(cfg, &(struct where){ SQ_DOWN, 0 }, value);
		if (expected)
			snprintf(err, errlen, "%s: %s, got '%.*s'", origin, expected, MAX_SHOWN_VALUE, value);
		return expected == NULL;
	}
	snprintf(err, errlen, "%s: unknown key", origin);
	return false;
}

bool sq_config_finish(const struct sq_emu_config *cfg, char *err, size_t errlen)
{
	const char *missing = !cfg->token_set ? "token" : !cfg->log_set ? "log" : !cfg->seed_set ? "seed" : NULL;
	if (missing)
		snprintf(err, errlen, "%s: %s: missing, set it in the file or with --%s", cfg->source,
			 missing, missing);
	return missing == NULL;
}

/* --- trace files --------------------------------------------------------------------- */

static bool parse_trace_line(char *text, struct sq_trace_step *step)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	char *t = trim(text);
	char *space = t;
	while (*space && !isspace((unsigned char)*space))
		space++;
	if (!*space)
		return false;
	*space = '\0';
	if (strcmp(t, "good") == 0)
		step->state = SQ_GOOD;
	else if (strcmp(t, "bad") == 0)
		step->state = SQ_BAD;
	else
		return false;
	return parse_positive(trim(space + 1), &step->duration);
}

static bool blank_or_comment(const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i] != '#'; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

bool sq_config_parse_trace(struct sq_emu_config *cfg, const char *name, const char *buf,
			   size_t len, char *err, size_t errlen)
{
	struct sq_trace_step *steps = malloc(sizeof(*steps) * SQ_MAX_TRACE_STEPS);
	if (!steps) {
		snprintf(err, errlen, "%s: out of memory", name);
		return false;
	}
	size_t n = 0, pos = 0;
	unsigned line = 0;
	while (pos < len) {
		const char *start = buf + pos, *nl = memchr(start, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - start) : len - pos;
		char text[MAX_LINE];
		line++;
		pos += line_len + 1;
		if (blank_or_comment(start, line_len))
			continue;
		bool ok = line_len < sizeof(text) && !memchr(start, '\0', line_len) && n < SQ_MAX_TRACE_STEPS;
		if (ok) {
			memcpy(text, start, line_len);
			text[line_len] = '\0';
			ok = parse_trace_line(text, &steps[n]);
		}
		if (!ok) {
			snprintf(err, errlen, "%s:%u: expected 'good DURATION' or 'bad DURATION' with a duration > 0 like 2s (at most %d lines)",
				 name, line, SQ_MAX_TRACE_STEPS);
			free(steps);
			return false;
		}
		n++;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: expected at least one 'good|bad DURATION' line", name);
		free(steps);
		return false;
	}
	free(cfg->trace);
	cfg->trace = steps;
	cfg->link.channel.trace = steps;
	cfg->link.channel.trace_len = n;
	return true;
}

bool sq_config_load_trace(struct sq_emu_config *cfg, char *err, size_t errlen)
{
	size_t len;
	char *buf = read_file(cfg->trace_path, &len, err, errlen);
	if (!buf)
		return false;
	bool ok = sq_config_parse_trace(cfg, cfg->trace_path, buf, len, err, errlen);
	free(buf);
	return ok;
}

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

static void write_rate(FILE *out, uint64_t bps)
{
	if (bps == SQ_RATE_UNLIMITED)
		fputs("unlimited", out);
	else
		fprintf(out, "%" PRIu64 "bit", bps);
}

static void write_direction(FILE *out, const char *prefix, const char *name,
			    const struct sq_direction_config *d)
{
	fprintf(out, "%s%s.mtu = %" PRIu32 "B\n", prefix, name, d->mtu);
	fprintf(out, "%s%s.bandwidth = ", prefix, name);
	if (d->rate_len == 1) {
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
}

void sq_config_write(const struct sq_emu_config *cfg, FILE *out, const char *prefix)
{
	fprintf(out, "%slisten = %s\n", prefix, cfg->listen_text);
	fprintf(out, "%stoken = %016" PRIx64 "\n", prefix, cfg->token);
	fprintf(out, "%slog = %s\n", prefix, cfg->log_path);
	fprintf(out, "%sseed = %" PRIu64 "\n", prefix, cfg->link.seed);
	fprintf(out, "%sreplication = %" PRIu32 "\n", prefix, cfg->link.replication);
	fprintf(out, "%skeepalive = %" PRId64 "us\n", prefix, cfg->keepalive);
	fprintf(out, "%speer_timeout = %" PRId64 "us\n", prefix, cfg->peer_timeout);
	fprintf(out, "%sautostart = %s\n", prefix, cfg->autostart == SQ_AUTOSTART_PEERS ? "peers" : "none");
	const struct sq_channel_config *ch = &cfg->link.channel;
	if (ch->trace) {
		fprintf(out, "%schannel.trace = %s\n", prefix, cfg->trace_path);
		fprintf(out, "%schannel.trace_steps = %zu\n", prefix, ch->trace_len);
	} else {
		fprintf(out, "%schannel.initial = %s\n", prefix, ch->initial_state == SQ_BAD ? "bad" : "good");
		for (int s = 0; s < SQ_STATES; s++) {
			fprintf(out, "%schannel.%s = ", prefix, s == SQ_GOOD ? "good" : "bad");
			write_dist(out, &ch->length[s]);
			fputc('\n', out);
		}
	}
	write_direction(out, prefix, "down", &cfg->link.dir[SQ_DOWN]);
	sq_router_write(out, prefix, "down", &cfg->link.dir[SQ_DOWN].router);
	write_direction(out, prefix, "up", &cfg->link.dir[SQ_UP]);
	sq_router_write(out, prefix, "up", &cfg->link.dir[SQ_UP].router);
}

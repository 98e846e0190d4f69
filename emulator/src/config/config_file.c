/* The configuration file parser (format: emulator/CONFIG.md): sections, lines,
 * required keys; the keys themselves are in config_link_keys.c and config_router.c. */
#include "config_file.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cell.h"
#include "config_keys.h"
#include "config_link_keys.h"
#include "config_router.h"
#include "config_text.h"
#include "config_capacity.h"
#include "config_trace.h"

#define MAX_SHOWN_VALUE 80

/* The fixed sections ([cell] the only optional one), then the router ones ([DIR.router],
 * [DIR.router.class.NAME], [DIR.router.filter.NAME]) of which there may be several, and the
 * hosts' ([host.K.channel], [host.K.down], [host.K.up]: config_cell.c). */
enum section { SEC_PROCESS, SEC_CHANNEL, SEC_DOWN, SEC_UP, SEC_CELL, SEC_ROUTER, SEC_CLASS,
	       SEC_FILTER, SEC_HOST, SECTIONS };
#define FIXED_SECTIONS SEC_ROUTER
#define REQUIRED_SECTIONS SEC_CELL
static const char *const section_names[FIXED_SECTIONS] = { "", "channel", "down", "up", "cell" };


static const struct key_spec *const section_keys[SECTIONS] = {
	sq_process_keys, sq_channel_keys, sq_direction_keys, sq_direction_keys, sq_cell_keys,
	sq_router_keys, sq_router_class_keys, sq_router_filter_keys, NULL,
};

#define MAX_KEYS SQ_MAX_SECTION_KEYS

/* --- the parser ---------------------------------------------------------------------- */

struct parser {
	struct sq_emu_config *cfg;
	const char *name;
	unsigned line;
	enum section section;
	struct where where;          /* of a router section */
	int host, host_section;      /* of a host's section: 1-based; SQ_DOWN, SQ_UP, -1 channel */
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
	if (p->section < SEC_ROUTER || p->section == SEC_HOST)
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

/* [host.K.channel], [host.K.down], [host.K.up] */
static bool parse_host_section(struct parser *p, const char *name)
{
	const char *problem;
	if (!sq_cell_host_section(p->cfg, name, &p->host, &p->host_section, &problem))
		return fail(p, "[%.80s]: unknown section", name);
	if (problem)
		return fail(p, "[%.80s]: %s", name, problem);
	sq_cell_mark_section(p->cfg, p->host, p->host_section, p->line);
	p->section = SEC_HOST;
	snprintf(p->label, sizeof(p->label), "%s", name);
	return true;
}

/* [down.router], [up.router.class.EF], [down.router.filter.voip] */
static bool parse_router_section(struct parser *p, const char *name)
{
	enum sq_dir dir;
	if (strncmp(name, "host.", 5) == 0)
		return parse_host_section(p, name);
	const char *rest;
	if (strncmp(name, "down.router", 11) == 0) {
		dir = SQ_DOWN;
		rest = name + 11;
	} else if (strncmp(name, "up.router", 9) == 0) {
		dir = SQ_UP;
		rest = name + 9;
	} else {
		return fail(p, "[%.80s]: unknown section, expected [channel], [down], [up], [down.router], "
			    "[down.router.class.NAME], [down.router.filter.NAME] (or up.), [cell], "
			    "[host.K.channel], [host.K.down], [host.K.up]", name);
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
	char *name = sq_config_trim(text + 1);
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
	char *key = sq_config_trim(text), *value = sq_config_trim(eq + 1);
	char shown[160];
	full_key(shown, sizeof(shown), p, key);
	if (p->section == SEC_HOST) {
		const char *problem = sq_cell_record(p->cfg, p->host, p->host_section, key, value, p->line);
		return problem ? fail(p, "%.120s: %s", shown, problem) : true;
	}
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
	char text[SQ_CONFIG_MAX_LINE];
	if (len >= sizeof(text))
		return fail(p, "line longer than %d bytes", SQ_CONFIG_MAX_LINE - 1);
	if (memchr(start, '\0', len))
		return fail(p, "line contains a NUL byte");
	memcpy(text, start, len);
	text[len] = '\0';
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	char *t = sq_config_trim(text);
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
	if (trace && (good || bad || key_was_seen(p, SEC_CHANNEL, "initial") || key_was_seen(p, SEC_CHANNEL, "start"))) {
		snprintf(p->err, p->errlen,
			 "%s: channel.trace: cannot be combined with channel.good, channel.bad, channel.initial or channel.start",
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

/* outage_every and outage_length of a section come together. */
static bool check_outage_pairs(struct parser *p)
{
	for (int s = SEC_CHANNEL; s <= SEC_UP; s++) {
		bool every = key_was_seen(p, (enum section)s, "outage_every");
		bool length = key_was_seen(p, (enum section)s, "outage_length");
		if (every != length) {
			snprintf(p->err, p->errlen, "%s: %s.%s: missing, expected a distribution like "
				 "uniform(5s, 30s) (outages need both outage_every and outage_length)",
				 p->name, section_names[s], every ? "outage_length" : "outage_every");
			return false;
		}
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
	for (int s = SEC_CHANNEL; s < REQUIRED_SECTIONS; s++) {
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
	return check_channel(p) && check_outage_pairs(p) && check_routers(p) &&
	       sq_cell_finish(p->cfg, p->err, p->errlen);
}

void sq_config_init(struct sq_emu_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	char unused[8];
	sq_config_override(cfg, "listen", "0.0.0.0:5300", "default", unused, sizeof(unused));
	cfg->keepalive = 1000000;
	cfg->peer_timeout = 5000000;
	cfg->autostart = SQ_AUTOSTART_NONE;
	cfg->link.channel.initial_state = SQ_GOOD;
	cfg->link.channel.error_grid = 1000;   /* 1 ms: used by error_draws = by_time */
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
	for (int d = 0; d < SQ_DIRS; d++) {
		free(cfg->capacity[d]);
		cfg->capacity[d] = NULL;
		cfg->link.dir[d].capacity = (struct sq_opportunity_trace){ 0 };
	}
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

bool sq_config_load(struct sq_emu_config *cfg, const char *path, char *err, size_t errlen)
{
	bool from_stdin = strcmp(path, "-") == 0;
	const char *name = from_stdin ? SQ_CONFIG_STDIN_NAME : path;
	size_t len;
	char *buf = from_stdin ? sq_config_read_stream(stdin, name, &len, err, errlen)
			       : sq_config_read_file(path, &len, err, errlen);
	if (!buf)
		return false;
	bool ok = sq_config_parse(cfg, name, buf, len, err, errlen);
	free(buf);
	ok = ok && (cfg->trace_path[0] == '\0' || sq_config_load_trace(cfg, err, errlen)) &&
	     sq_config_load_capacity(cfg, err, errlen);
	if (ok)
		sq_cell_share_trace(cfg);
	return ok;
}

bool sq_config_override(struct sq_emu_config *cfg, const char *key, const char *value,
			const char *origin, char *err, size_t errlen)
{
	for (int i = 0; sq_process_keys[i].name; i++) {
		if (strcmp(sq_process_keys[i].name, key) != 0)
			continue;
		const char *expected = sq_process_keys[i].set(cfg, &(struct where){ SQ_DOWN, 0 }, value);
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
	if (missing && !cfg->token_set)
		snprintf(err, errlen, "%s: token: missing, give it with --token-file PATH (or set it in "
			 "the file or with --token)", cfg->source);
	else if (missing)
		snprintf(err, errlen, "%s: %s: missing, set it in the file or with --%s", cfg->source,
			 missing, missing);
	return missing == NULL;
}


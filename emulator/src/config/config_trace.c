/* Channel trace files: one "good|bad DURATION" per line (emulator/CONFIG.md). */
#include "config_trace.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_text.h"
#include "value_parse.h"


/* --- trace files --------------------------------------------------------------------- */

static bool parse_trace_line(char *text, struct sq_trace_step *step)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	char *t = sq_config_trim(text);
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
	return sq_parse_duration(sq_config_trim(space + 1), &step->duration) && step->duration > 0;
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
		char text[SQ_CONFIG_MAX_LINE];
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
	char *buf = sq_config_read_file(cfg->trace_path, &len, err, errlen);
	if (!buf)
		return false;
	bool ok = sq_config_parse_trace(cfg, cfg->trace_path, buf, len, err, errlen);
	free(buf);
	return ok;
}


/* mahimahi delivery-opportunity traces (emulator/CONFIG.md "Bandwidth"). The format is
 * mahimahi's own, with its rules: every line a time in ms (no blank lines, no comments),
 * non-decreasing, at least one line, the last > 0. */
#include "config_capacity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity_trace.h"
#include "config_text.h"

/* Digits only, at most SQ_MAX_OPPORTUNITY_MS. */
static bool parse_ms(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > SQ_MAX_OPPORTUNITY_MS)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

static bool fail(char *err, size_t errlen, const char *name, unsigned line, const char *what,
		 uint32_t *ms)
{
	if (line)
		snprintf(err, errlen, "%s:%u: %s", name, line, what);
	else
		snprintf(err, errlen, "%s: %s", name, what);
	free(ms);
	return false;
}

#define LINE_EXPECTED "expected a delivery opportunity's time in whole milliseconds (digits only, " \
	"at most 1000000000), one per line as in mahimahi's traces"

bool sq_config_parse_capacity(struct sq_emu_config *cfg, enum sq_dir dir, const char *name,
			      const char *buf, size_t len, char *err, size_t errlen)
{
	size_t cap = 1024, n = 0, pos = 0;
	uint32_t *ms = malloc(cap * sizeof *ms);
	unsigned line = 0;
	if (!ms)
		return fail(err, errlen, name, 0, "out of memory", NULL);
	while (pos < len) {
		const char *start = buf + pos, *nl = memchr(start, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - start) : len - pos;
		line++;
		pos += line_len + 1;
		if (n == SQ_MAX_OPPORTUNITIES)
			return fail(err, errlen, name, line, "more than 5000000 opportunities", ms);
		if (n == cap) {
			uint32_t *more = realloc(ms, 2 * cap * sizeof *ms);
			if (!more)
				return fail(err, errlen, name, line, "out of memory", ms);
			ms = more;
			cap *= 2;
		}
		if (!parse_ms(start, line_len, &ms[n]))
			return fail(err, errlen, name, line, LINE_EXPECTED, ms);
		if (n > 0 && ms[n] < ms[n - 1])
			return fail(err, errlen, name, line, "times must be non-decreasing (mahimahi's rule)", ms);
		n++;
	}
	if (n == 0)
		return fail(err, errlen, name, 0, "expected at least one delivery opportunity (a time in ms per line)", ms);
	if (ms[n - 1] == 0)
		return fail(err, errlen, name, line, "the trace must last a nonzero time: its last line is its "
			    "period, got 0 ms", ms);
	free(cfg->capacity[dir]);
	cfg->capacity[dir] = ms;
	cfg->link.dir[dir].capacity = (struct sq_opportunity_trace){ .ms = ms, .len = n };
	return true;
}

bool sq_config_load_capacity(struct sq_emu_config *cfg, char *err, size_t errlen)
{
	for (int d = 0; d < SQ_DIRS; d++) {
		const char *path = cfg->capacity_path[d];
		if (!path[0])
			continue;
		size_t len;
		char *buf = sq_config_read_file(path, &len, err, errlen);
		if (!buf)
			return false;
		bool ok = sq_config_parse_capacity(cfg, (enum sq_dir)d, path, buf, len, err, errlen);
		free(buf);
		if (!ok)
			return false;
	}
	return true;
}

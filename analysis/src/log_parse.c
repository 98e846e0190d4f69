/* The emulator log -> record stream conversion of squall-log-records (log_record.h),
 * on bytes in memory, so that it can be fuzzed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_parse.h"
#include "log_record.h"

/* Per log column: index into ints[] (>= 0) or, as -1 - k, into texts[k]. */
static const int column_slot[SQ_LOG_COLUMNS] = {
	0, -1, -2, 1, 2, -3, 3, 4, 5, -4, -5, 6, -6, 7, 8, 9, 10, -7, 11, -8,
};

struct text {
	const char *bytes;
	uint32_t len;
	uint64_t first_line;
};

/* Open-addressing table of distinct texts; ids are 1-based positions in `texts`. */
struct interner {
	struct text *texts;
	size_t n_texts, cap_texts;
	uint32_t *slots; /* 0 = empty, else text id */
	size_t n_slots;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int interner_grow(struct interner *in)
{
	size_t n = in->n_slots ? in->n_slots * 2 : 1024;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t id = 1; id <= in->n_texts; id++) {
		const struct text *t = &in->texts[id - 1];
		size_t i = hash_bytes(t->bytes, t->len) & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)id;
	}
	free(in->slots);
	in->slots = slots;
	in->n_slots = n;
	return 0;
}

/* items (n used of *cap, each size bytes) with room for one more: as it is, or doubled
 * (first items at first); NULL when out of memory, items then left as they were. */
static void *room_for_one(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return items;
	size_t bigger = *cap ? *cap * 2 : first;
	void *grown = realloc(items, bigger * size);
	if (grown)
		*cap = bigger;
	return grown;
}

static int interner_append(struct interner *in, const char *s, size_t len, uint64_t line)
{
	struct text *texts = room_for_one(in->texts, &in->cap_texts, in->n_texts, sizeof *texts, 256);
	if (!texts)
		return -1;
	in->texts = texts;
	in->texts[in->n_texts++] = (struct text){ s, (uint32_t)len, line };
	return 0;
}

/* The id of the text (new ones are added); 0 for `-`; -1 when out of memory. */
static int64_t intern(struct interner *in, const char *s, size_t len, uint64_t line)
{
	if (len == 1 && s[0] == '-')
		return 0;
	if (2 * (in->n_texts + 1) > in->n_slots && interner_grow(in) < 0)
		return -1;
	size_t i = hash_bytes(s, len) & (in->n_slots - 1);
	for (; in->slots[i]; i = (i + 1) & (in->n_slots - 1)) {
		const struct text *t = &in->texts[in->slots[i] - 1];
		if (t->len == len && memcmp(t->bytes, s, len) == 0)
			return in->slots[i];
	}
	if (interner_append(in, s, len, line) < 0)
		return -1;
	in->slots[i] = (uint32_t)in->n_texts;
	return (int64_t)in->n_texts;
}

/* A plain decimal int64 (optional '-', 1..19 digits); `-` is SQ_LOG_NULL. */
static int parse_int(const char *s, size_t len, int64_t *out)
{
	if (len == 1 && s[0] == '-') {
		*out = SQ_LOG_NULL;
		return 0;
	}
	int negative = len > 0 && s[0] == '-';
	size_t i = negative ? 1 : 0;
	if (len - i == 0 || len - i > 18)
		return -1; /* 18 digits cannot overflow; longer ones go to the Python parser */
	int64_t v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = negative ? -v : v;
	return 0;
}

/* Bytes the Python parser could treat differently (line breaks splitlines() knows,
 * whitespace strip() knows, non-ASCII): such lines are left to it. */
static int plain_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c < 0x7f);
}

static int blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

struct comment {
	uint64_t line, events_before;
	const char *bytes;
	uint32_t len;
};

struct reader {
	struct interner strings;
	struct comment *comments;
	size_t n_comments, cap_comments;
	uint64_t n_events;
	FILE *out;
	const char *out_name;
	int write_failed;
};

static void emit(struct reader *r, const void *buf, size_t len)
{
	if (!r->write_failed && fwrite(buf, 1, len, r->out) != len) {
		fprintf(stderr, "%s: write failed: %s\n", r->out_name, strerror(errno));
		r->write_failed = 1;
	}
}

static int add_comment(struct reader *r, const char *s, size_t len, uint64_t line)
{
	struct comment *c = room_for_one(r->comments, &r->cap_comments, r->n_comments, sizeof *c, 64);
	if (!c)
		return -1;
	r->comments = c;
	r->comments[r->n_comments++] = (struct comment){ line, r->n_events, s, (uint32_t)len };
	return 0;
}

enum line_result { LINE_OK = 0, LINE_UNUSUAL = 1, LINE_NO_MEMORY = 2 };

static enum line_result event_line(struct reader *r, const char *s, size_t len, uint64_t line)
{
	struct sq_log_record rec;
	memset(&rec, 0, sizeof rec);
	rec.line = line;
	size_t start = 0;
	for (int col = 0; col < SQ_LOG_COLUMNS; col++) {
		size_t end = start;
		while (end < len && s[end] != '\t')
			end++;
		if ((end == len) != (col == SQ_LOG_COLUMNS - 1))
			return LINE_UNUSUAL; /* fewer or more than 20 columns */
		int slot = column_slot[col];
		if (slot >= 0) {
			if (parse_int(s + start, end - start, &rec.ints[slot]) < 0)
				return LINE_UNUSUAL;
		} else {
			int64_t id = intern(&r->strings, s + start, end - start, line);
			if (id < 0)
				return LINE_NO_MEMORY;
			rec.texts[-1 - slot] = (uint32_t)id;
		}
		start = end + 1;
	}
	if (rec.ints[0] == SQ_LOG_NULL)
		return LINE_UNUSUAL; /* time_us must be a number */
	emit(r, &rec, sizeof rec);
	r->n_events++;
	return LINE_OK;
}

static enum line_result one_line(struct reader *r, const char *s, size_t len, uint64_t line)
{
	if (len > 0 && s[0] == '#') {
		for (size_t i = 0; i < len; i++)
			if (s[i] == '\r' || s[i] == '\v' || s[i] == '\f' || (s[i] >= 0x1c && s[i] <= 0x1e))
				return LINE_UNUSUAL;
		return add_comment(r, s + 1, len - 1, line) < 0 ? LINE_NO_MEMORY : LINE_OK;
	}
	for (size_t i = 0; i < len; i++)
		if (!plain_byte((unsigned char)s[i]))
			return LINE_UNUSUAL;
	if (blank(s, len))
		return LINE_OK;
	return event_line(r, s, len, line);
}

static void write_tables(struct reader *r)
{
	for (size_t i = 0; i < r->strings.n_texts; i++) {
		const struct text *t = &r->strings.texts[i];
		uint32_t head[2] = { t->len, 0 };
		emit(r, head, sizeof head);
		emit(r, &t->first_line, sizeof t->first_line);
		emit(r, t->bytes, t->len);
	}
	for (size_t i = 0; i < r->n_comments; i++) {
		const struct comment *c = &r->comments[i];
		uint64_t head[2] = { c->line, c->events_before };
		uint32_t size[2] = { c->len, 0 };
		emit(r, head, sizeof head);
		emit(r, size, sizeof size);
		emit(r, c->bytes, c->len);
	}
	struct sq_log_stream_footer f = {
		.n_events = r->n_events,
		.n_strings = r->strings.n_texts,
		.n_comments = r->n_comments,
		.magic = SQ_LOG_MAGIC,
	};
	emit(r, &f, sizeof f);
}

static int convert(const char *path, const char *data, size_t size, struct reader *r)
{
	struct sq_log_stream_header h = {
		.magic = SQ_LOG_MAGIC,
		.version = SQ_LOG_VERSION,
		.record_size = sizeof(struct sq_log_record),
	};
	emit(r, &h, sizeof h);
	uint64_t line = 0;
	for (size_t pos = 0; pos < size;) {
		const char *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		enum line_result res = one_line(r, data + pos, len, ++line);
		if (res == LINE_UNUSUAL)
			return SQ_LOG_EXIT_UNUSUAL;
		if (res == LINE_NO_MEMORY) {
			fprintf(stderr, "%s:%llu: out of memory\n", path, (unsigned long long)line);
			return 1;
		}
		pos += len + 1;
	}
	write_tables(r);
	if (!r->write_failed && fflush(r->out) != 0) {
		fprintf(stderr, "%s: write failed: %s\n", r->out_name, strerror(errno));
		r->write_failed = 1;
	}
	return r->write_failed ? 1 : 0;
}

int sq_log_convert(const char *path, const char *data, size_t size, FILE *out,
		   const char *out_name)
{
	struct reader r = { .out = out, .out_name = out_name };
	int status = convert(path, data, size, &r);
	free(r.strings.texts);
	free(r.strings.slots);
	free(r.comments);
	return status;
}

/* Appending text to a fixed-size buffer without printf. The event log writes
 * several lines per packet; formatting them with vsnprintf took about a third
 * of the emulator's CPU time under a flood.
 *
 * Like snprintf, an append never writes past cap - 1 bytes (room for a NUL is
 * kept) and cuts what does not fit. */
#ifndef SQ_TEXT_APPEND_H
#define SQ_TEXT_APPEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sq_text {
	char *buf;
	size_t cap, len;
};

static inline void sq_text_put(struct sq_text *t, const char *s, size_t n)
{
	size_t room = t->len + 1 < t->cap ? t->cap - t->len - 1 : 0;
	if (n > room)
		n = room;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

static inline void sq_text_put_char(struct sq_text *t, char c)
{
	sq_text_put(t, &c, 1);
}

static inline void sq_text_put_str(struct sq_text *t, const char *s)
{
	sq_text_put(t, s, strlen(s));
}

/* Decimal digits of v at the end of a 20-byte scratch; returns the first. */
static inline char *sq_text_digits(uint64_t v, char scratch[20])
{
	char *p = scratch + 20;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

static inline void sq_text_put_u64(struct sq_text *t, uint64_t v)
{
	char scratch[20];
	char *p = sq_text_digits(v, scratch);
	sq_text_put(t, p, (size_t)(scratch + 20 - p));
}

static inline void sq_text_put_i64(struct sq_text *t, int64_t v)
{
	if (v < 0) {
		sq_text_put_char(t, '-');
		sq_text_put_u64(t, (uint64_t)0 - (uint64_t)v);
		return;
	}
	sq_text_put_u64(t, (uint64_t)v);
}

/* Dotted quad, as inet_ntop(AF_INET) writes it. */
static inline void sq_text_put_ipv4(struct sq_text *t, const uint8_t a[4])
{
	for (int i = 0; i < 4; i++) {
		if (i)
			sq_text_put_char(t, '.');
		sq_text_put_u64(t, a[i]);
	}
}

#endif

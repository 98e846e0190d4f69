#include "value_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t pow10u(unsigned k)
{
	uint64_t v = 1;
	while (k--)
		v *= 10;
	return v;
}

/* scale = mantissa * 10^exponent with the mantissa not a multiple of ten
 * (60 000 000 µs per minute = 6 * 10^7). */
static void split_scale(uint64_t scale, uint64_t *mantissa, unsigned *exponent)
{
	*exponent = 0;
	for (; scale >= 10 && scale % 10 == 0; scale /= 10)
		(*exponent)++;
	*mantissa = scale;
}

/* Adds 0.FRAC (k digits) times 10^m to *value if the result is whole and fits. */
static bool add_fraction(uint64_t frac, unsigned k, unsigned m, uint64_t *value)
{
	uint64_t add;
	if (k <= m) {
		uint64_t mul = pow10u(m - k);
		if (frac > UINT64_MAX / mul)
			return false;
		add = frac * mul;
	} else {
		uint64_t div = pow10u(k - m);
		if (frac % div != 0)
			return false;
		add = frac / div;
	}
	if (*value > UINT64_MAX - add)
		return false;
	*value += add;
	return true;
}

/* Adds 0.FRAC (k digits) times scale to *value if the result is whole and fits. */
static bool add_scaled_fraction(uint64_t frac, unsigned k, uint64_t scale, uint64_t *value)
{
	uint64_t mantissa;
	unsigned exponent;
	split_scale(scale, &mantissa, &exponent);
	for (; k > 0 && frac % 10 == 0; k--)
		frac /= 10;   /* "1.50s" is "1.5s" */
	if (frac > UINT64_MAX / mantissa)
		return false;
	return add_fraction(frac * mantissa, k, exponent, value);
}

/* Reads DIGITS at *p into *value; false on none or overflow. */
static bool read_digits(const char **p, uint64_t *value, unsigned *count)
{
	*value = 0;
	*count = 0;
	for (; isdigit((unsigned char)**p); (*p)++, (*count)++) {
		if (*value > (UINT64_MAX - 9) / 10)
			return false;
		*value = *value * 10 + (uint64_t)(**p - '0');
	}
	return *count > 0;
}

/* "DIGITS[.DIGITS]" at s times scale, whole and fitting;
 * *end is set after the number. */
static bool parse_scaled_decimal(const char *s, uint64_t scale, const char **end, uint64_t *out)
{
	const char *p = s;
	uint64_t whole, frac = 0;
	unsigned nwhole, nfrac = 0;
	if (!read_digits(&p, &whole, &nwhole) || whole > UINT64_MAX / scale)
		return false;
	uint64_t value = whole * scale;
	if (*p == '.') {
		p++;
		/* 19 digits always fit in u64; more would only be trailing zeros. */
		if (!read_digits(&p, &frac, &nfrac) || nfrac > 18)
			return false;
		if (!add_scaled_fraction(frac, nfrac, scale, &value))
			return false;
	}
	*end = p;
	*out = value;
	return true;
}

bool sq_parse_with_units(const char *s, const struct sq_unit *units, uint64_t *out)
{
	size_t n = strlen(s);
	for (const struct sq_unit *u = units; u->suffix; u++) {
		size_t un = strlen(u->suffix);
		if (n <= un || strcmp(s + n - un, u->suffix) != 0)
			continue;
		const char *end;
		uint64_t v;
		if (!parse_scaled_decimal(s, u->scale, &end, &v))
			return false;
		if (end != s + n - un)
			continue;   /* "5ms" against "s": the number did not reach the suffix */
		*out = v;
		return true;
	}
	return false;
}

bool sq_parse_duration(const char *s, int64_t *us)
{
	static const struct sq_unit units[] = {
		{ "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { NULL, 0 },
	};
	uint64_t v;
	/* Headroom so that adding two durations cannot overflow. */
	if (!sq_parse_with_units(s, units, &v) || v > (uint64_t)INT64_MAX / 2)
		return false;
	*us = (int64_t)v;
	return true;
}

bool sq_parse_rate(const char *s, uint64_t *bps)
{
	static const struct sq_unit units[] = {
		{ "kbit", 1000 }, { "Mbit", 1000000 }, { "Gbit", 1000000000 }, { "bit", 1 },
		{ NULL, 0 },
	};
	if (strcmp(s, "unlimited") == 0) {
		*bps = SQ_RATE_NO_LIMIT;
		return true;
	}
	uint64_t v;
	if (!sq_parse_with_units(s, units, &v) || v == SQ_RATE_NO_LIMIT)
		return false;
	*bps = v;
	return true;
}

bool sq_parse_size(const char *s, uint32_t *bytes)
{
	static const struct sq_unit units[] = { { "B", 1 }, { NULL, 0 } };
	uint64_t v;
	if (!sq_parse_with_units(s, units, &v) || v > UINT32_MAX)
		return false;
	*bytes = (uint32_t)v;
	return true;
}

bool sq_parse_count(const char *s, uint64_t max, uint64_t *v)
{
	if (!isdigit((unsigned char)*s))
		return false;
	uint64_t acc = 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		uint64_t d = (uint64_t)(*s - '0');
		if (d > max || acc > (max - d) / 10)
			return false;
		acc = acc * 10 + d;
	}
	*v = acc;
	return true;
}

bool sq_parse_decimal(const char *s, double max, double *p)
{
	/* strtod alone would accept signs, spaces, hex, "inf" and "nan". */
	if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return false;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0.0 || v > max)
		return false;
	*p = v;
	return true;
}

bool sq_parse_probability(const char *s, double *p)
{
	return sq_parse_decimal(s, 1.0, p);
}

bool sq_parse_bool(const char *s, bool *b)
{
	if (strcmp(s, "true") == 0)
		*b = true;
	else if (strcmp(s, "false") == 0)
		*b = false;
	else
		return false;
	return true;
}

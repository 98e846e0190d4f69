/* One parser for each kind of value the programs read from command lines and
 * configuration files: durations, rates, sizes, counts, probabilities, booleans
 * (HOST:PORT is in host_port.h). Numbers are parsed in exact integer arithmetic:
 * "1.5s" is 1 500 000 µs, and a value that is not a whole number of the base
 * unit, overflows, is negative or has trailing text is refused.
 *
 * Each parser takes a NUL-terminated value without surrounding spaces and
 * returns false if it does not match its form exactly; callers say what was
 * expected in their own words (flag, or FILE:LINE: key), optionally reusing the
 * SQ_EXPECT_* phrases. */
#ifndef SQ_VALUE_PARSE_H
#define SQ_VALUE_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* A written-out unit: its suffix and how many base units it is (> 0). A
 * fraction is accepted when it comes to a whole number of base units. A suffix
 * "" accepts a bare number. */
struct sq_unit {
	const char *suffix;
	uint64_t scale;
};

/* "DIGITS[.DIGITS]SUFFIX" with one suffix of units (terminated by a NULL
 * suffix; longer suffixes must come before those they end with) -> base units. */
bool sq_parse_with_units(const char *s, const struct sq_unit *units, uint64_t *out);

/* "250us", "700ms", "1.5s" -> microseconds, at most INT64_MAX / 2. */
bool sq_parse_duration(const char *s, int64_t *us);
#define SQ_EXPECT_DURATION "a duration such as 250us, 200ms or 1.5s (whole microseconds)"

/* "64kbit", "1.5Mbit", "0bit", "1Gbit" -> bit/s; "unlimited" -> SQ_RATE_NO_LIMIT. */
#define SQ_RATE_NO_LIMIT UINT64_MAX
bool sq_parse_rate(const char *s, uint64_t *bps);
#define SQ_EXPECT_RATE "a rate such as 9600bit, 64kbit or 1.5Mbit (whole bit/s)"

/* "576B" -> bytes, fits in 32 bits. */
bool sq_parse_size(const char *s, uint32_t *bytes);
#define SQ_EXPECT_SIZE "a size in bytes such as 576B"

/* Decimal digits only, no sign, value <= max. */
bool sq_parse_count(const char *s, uint64_t max, uint64_t *v);

/* A decimal in [0, max] such as 0.125 or 15. */
bool sq_parse_decimal(const char *s, double max, double *p);

/* A decimal in [0, 1] such as 0.01 or 1. */
bool sq_parse_probability(const char *s, double *p);

/* "true" or "false". */
bool sq_parse_bool(const char *s, bool *b);

#endif

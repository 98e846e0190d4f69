/* Parsing of the configuration file's written-out units (emulator/CONFIG.md).
 * Each parser takes a NUL-terminated value with no surrounding spaces and returns
 * false if it does not match its form exactly. */
#ifndef SQ_UNITS_H
#define SQ_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* "700ms", "1.5s", "250us" -> microseconds (whole µs only). */
bool sq_parse_duration(const char *s, int64_t *us);
/* "64kbit", "1.5Mbit", "0bit" -> bit/s; "unlimited" -> UINT64_MAX when allowed. */
bool sq_parse_rate(const char *s, uint64_t *bps);
/* "576B" -> bytes (fits u32). */
bool sq_parse_size(const char *s, uint32_t *bytes);
/* decimal in [0, 1] */
bool sq_parse_probability(const char *s, double *p);
/* decimal integer without sign, <= max */
bool sq_parse_count(const char *s, uint64_t max, uint64_t *v);
bool sq_parse_bool(const char *s, bool *b);

#endif

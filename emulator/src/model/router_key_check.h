/* A discipline's own keys checked within their ranges (router_<name>.c's `check`), apart from
 * router_check.c, which looks disciplines up in the table: so no discipline links back to it. */
#ifndef SQ_ROUTER_KEY_CHECK_H
#define SQ_ROUTER_KEY_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

/* A discipline's real-valued key v within (lo, hi] (lo_open) or [lo, hi]; else false and
 * "<cp>.<key>: 0 is outside (0, 10000]" in err (key: "pie.alpha"). NaN fails. */
bool sq_router_check_range(double v, double lo, double hi, bool lo_open, const char *cp, const char *key,
			   char *err, size_t errlen);

/* A discipline's time key v within [lo, hi] µs; else false and
 * "<cp>.<key>: 0us is outside [1us, 10000000us]" in err. */
bool sq_router_check_time(sq_time_us v, sq_time_us lo, sq_time_us hi, const char *cp, const char *key,
			  char *err, size_t errlen);

#endif

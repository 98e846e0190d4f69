#include "router_key_check.h"

#include <stdio.h>

bool sq_router_check_range(double v, double lo, double hi, bool lo_open, const char *cp, const char *key,
			   char *err, size_t errlen)
{
	/* Written so that NaN fails too. */
	if ((lo_open ? v > lo : v >= lo) && v <= hi)
		return true;
	snprintf(err, errlen, "%s.%s: %g is outside %c%g, %g]", cp, key, v, lo_open ? '(' : '[', lo, hi);
	return false;
}

bool sq_router_check_time(sq_time_us v, sq_time_us lo, sq_time_us hi, const char *cp, const char *key,
			  char *err, size_t errlen)
{
	if (v >= lo && v <= hi)
		return true;
	snprintf(err, errlen, "%s.%s: %lldus is outside [%lldus, %lldus]", cp, key, (long long)v, (long long)lo,
		 (long long)hi);
	return false;
}

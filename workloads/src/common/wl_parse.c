#include "wl_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_port.h"
#include "value_parse.h"

/* The workloads also accept "min" and a bare number of seconds (workloads/README.md). */
static bool parse_workload_duration(const char *text, int64_t *us)
{
    static const struct sq_unit units[] = {
        {"min", 60000000}, {"us", 1}, {"ms", 1000}, {"s", 1000000}, {"", 1000000}, {NULL, 0},
    };
    uint64_t v;
    if (!sq_parse_with_units(text, units, &v) || v > (uint64_t)INT64_MAX / 2)
        return false;
    *us = (int64_t)v;
    return true;
}

int wl_parse_duration_us(const char *flag, const char *text, bool allow_zero, int64_t *out_us)
{
    int64_t us;
    if (parse_workload_duration(text, &us) && (allow_zero || us > 0)) {
        *out_us = us;
        return 0;
    }
    fprintf(stderr, "%s: expected a %sduration like 300ms, 5s, 100us or 1min, got '%s'\n", flag,
            allow_zero ? "non-negative " : "positive ", text);
    return -1;
}

int wl_parse_uint(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (!sq_parse_count(text, max, &v) || v < min) {
        fprintf(stderr, "%s: expected an integer from %llu to %llu, got '%s'\n", flag,
                (unsigned long long)min, (unsigned long long)max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int wl_parse_tos(const char *flag, const char *text, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 0);
    if (text[0] == '\0' || text[0] == '-' || *end != '\0' || errno != 0 || v < 0 || v > 255) {
        fprintf(stderr, "%s: expected a TOS byte from 0 to 255 (decimal or 0x..), got '%s'\n", flag, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Datagrams per second may be fractional: parsed exactly in thousandths. */
static bool parse_packet_rate(const char *text, double *pps)
{
    static const struct sq_unit units[] = {{"pps", 1000}, {NULL, 0}};
    uint64_t milli;
    if (!sq_parse_with_units(text, units, &milli))
        return false;
    *pps = (double)milli / 1000.0;
    return true;
}

/* Bit rates as every program writes them; the workloads say "max", not "unlimited". */
static bool parse_bit_rate(const char *text, double *bps)
{
    uint64_t v;
    if (strcmp(text, "unlimited") == 0 || !sq_parse_rate(text, &v))
        return false;
    *bps = (double)v;
    return true;
}

int wl_parse_rate(const char *flag, const char *text, struct wl_rate *out)
{
    *out = (struct wl_rate){0};
    if (strcmp(text, "max") == 0) {
        out->max = true;
        return 0;
    }
    if (parse_bit_rate(text, &out->value) && out->value > 0)
        return 0;
    if (parse_packet_rate(text, &out->value) && out->value > 0) {
        out->per_packet = true;
        return 0;
    }
    *out = (struct wl_rate){0};
    fprintf(stderr, "%s: expected a positive rate like 32kbit, 1.5Mbit, 64000bit, 30pps or 'max', got '%s'\n",
            flag, text);
    return -1;
}

int wl_parse_endpoint(const char *flag, const char *text, bool allow_port0,
                      struct sockaddr_storage *out, socklen_t *out_len)
{
    if (sq_parse_numeric_endpoint(text, allow_port0, out, out_len))
        return 0;
    fprintf(stderr, "%s: expected ADDR:PORT with a numeric IPv4 address or [IPv6]:PORT and a port "
            "from %d to 65535, got '%s'\n", flag, allow_port0 ? 0 : 1, text);
    return -1;
}

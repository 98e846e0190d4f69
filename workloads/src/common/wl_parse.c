#include "wl_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_number_prefix(const char *text, double *value, const char **unit)
{
    char *end = NULL;
    errno = 0;
    *value = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(*value))
        return -1;
    *unit = end;
    return 0;
}

int wl_parse_duration_us(const char *flag, const char *text, bool allow_zero, int64_t *out_us)
{
    static const struct { const char *unit; double us; } units[] = {
        {"", 1e6}, {"s", 1e6}, {"ms", 1e3}, {"us", 1.0}, {"min", 60e6},
    };
    double value;
    const char *unit;
    if (parse_number_prefix(text, &value, &unit) == 0) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(unit, units[i].unit) != 0)
                continue;
            double us = value * units[i].us;
            if (us < 0 || (!allow_zero && us < 1) || us > 1e15)
                break;
            *out_us = (int64_t)llround(us);
            return 0;
        }
    }
    fprintf(stderr, "%s: expected a %sduration like 300ms, 5s, 100us or 1min, got '%s'\n", flag,
            allow_zero ? "non-negative " : "positive ", text);
    return -1;
}

int wl_parse_uint(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] == '-' || text[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
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

int wl_parse_rate(const char *flag, const char *text, struct wl_rate *out)
{
    static const struct { const char *unit; double mult; bool pps; } units[] = {
        {"bit", 1, false}, {"kbit", 1e3, false}, {"Mbit", 1e6, false}, {"Gbit", 1e9, false},
        {"pps", 1, true},
    };
    *out = (struct wl_rate){0};
    if (strcmp(text, "max") == 0) {
        out->max = true;
        return 0;
    }
    double value;
    const char *unit;
    if (parse_number_prefix(text, &value, &unit) == 0 && value > 0) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(unit, units[i].unit) == 0) {
                out->per_packet = units[i].pps;
                out->value = value * units[i].mult;
                return 0;
            }
        }
    }
    fprintf(stderr, "%s: expected a positive rate like 32kbit, 1.5Mbit, 64000bit, 30pps or 'max', got '%s'\n",
            flag, text);
    return -1;
}

static int split_host_port(const char *text, char *host, size_t host_size, const char **port)
{
    const char *colon;
    const char *host_start = text;
    size_t host_len;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return -1;
        host_start = text + 1;
        host_len = (size_t)(close - host_start);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || strchr(text, ':') != colon)
            return -1;
        host_len = (size_t)(colon - text);
    }
    if (host_len == 0 || host_len >= host_size)
        return -1;
    memcpy(host, host_start, host_len);
    host[host_len] = '\0';
    *port = colon + 1;
    return 0;
}

static int parse_port(const char *text, bool allow_port0, uint16_t *port)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || errno != 0 || v < (allow_port0 ? 0 : 1) || v > 65535)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

int wl_parse_endpoint(const char *flag, const char *text, bool allow_port0,
                      struct sockaddr_storage *out, socklen_t *out_len)
{
    char host[INET6_ADDRSTRLEN + 1];
    const char *port_text;
    uint16_t port;
    memset(out, 0, sizeof *out);
    if (split_host_port(text, host, sizeof host, &port_text) == 0 &&
        parse_port(port_text, allow_port0, &port) == 0) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)out;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
        if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(port);
            *out_len = sizeof *v4;
            return 0;
        }
        if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(port);
            *out_len = sizeof *v6;
            return 0;
        }
    }
    fprintf(stderr, "%s: expected ADDR:PORT with a numeric IPv4 address or [IPv6]:PORT and a port "
            "from %d to 65535, got '%s'\n", flag, allow_port0 ? 0 : 1, text);
    return -1;
}

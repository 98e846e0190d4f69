/* Parsing of command-line values. Each parser returns 0 on success, -1 on error after
 * writing a sentence to stderr that names the flag and what was expected. */
#ifndef WL_PARSE_H
#define WL_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* "300ms", "5s", "2.5s", "100us", "1min", bare number = seconds. allow_zero permits 0. */
int wl_parse_duration_us(const char *flag, const char *text, bool allow_zero, int64_t *out_us);
/* A positive integer in [min, max]. */
int wl_parse_uint(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* 0..255, decimal or 0x hex. */
int wl_parse_tos(const char *flag, const char *text, int *out);

struct wl_rate {
    bool max;           /* as fast as possible */
    bool per_packet;    /* value is datagrams per second */
    double value;       /* bits/s of payload, or datagrams/s */
};
/* "32kbit", "1.5Mbit", "64000bit", "30pps", "max". Zero or negative is an error. */
int wl_parse_rate(const char *flag, const char *text, struct wl_rate *out);

/* "198.18.40.1:5001" or "[2001:db8::1]:5001"; port 0 allowed only when allow_port0. */
int wl_parse_endpoint(const char *flag, const char *text, bool allow_port0,
                      struct sockaddr_storage *out, socklen_t *out_len);

#endif

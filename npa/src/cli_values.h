/* Command-line values of squall-npa and squall-naive-relay (the syntax is
 * common/value_parse.h and common/host_port.h; these add the NPA's messages):
 * durations with units, the run token, HOST:PORT endpoints, and numbers.
 * Each returns 0, or -1 with a sentence about the text in err. */
#ifndef NPA_CLI_VALUES_H
#define NPA_CLI_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct npa_endpoint {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[280];          /* as given, for messages */
};

/* "250ms", "1s", "1.5s", "800us" -> microseconds, > 0. */
int npa_parse_duration(const char *text, int64_t *us, char *err, size_t errlen);

/* Writes a duration the way a user would write it: "5 s", "250 ms", "1.5 s". */
void npa_format_duration(int64_t us, char *buf, size_t len);

/* Exactly 16 hexadecimal digits (optionally prefixed by 0x) -> u64. */
int npa_parse_token(const char *text, uint64_t *token, char *err, size_t errlen);

/* "198.19.128.1:5300", "[2001:db8::1]:5300" or "host.example:5300". */
int npa_parse_endpoint(const char *text, struct npa_endpoint *out, char *err, size_t errlen);

/* A decimal integer in [min, max]. */
int npa_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *err,
		   size_t errlen);

#endif

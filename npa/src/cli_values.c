#include "cli_values.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "host_port.h"
#include "token_file.h"
#include "value_parse.h"

int npa_parse_duration(const char *text, int64_t *us, char *err, size_t errlen)
{
	if (!sq_parse_duration(text, us) || *us <= 0) {
		snprintf(err, errlen, "'%s' is not a positive duration: expected a number with "
			 "a unit, such as 200ms, 1s or 1.5s", text);
		return -1;
	}
	return 0;
}

void npa_format_duration(int64_t us, char *buf, size_t len)
{
	if (us % 1000000 == 0)
		snprintf(buf, len, "%lld s", (long long)(us / 1000000));
	else if (us >= 1000000 && us % 1000 == 0)
		snprintf(buf, len, "%g s", (double)us / 1e6);
	else if (us % 1000 == 0)
		snprintf(buf, len, "%lld ms", (long long)(us / 1000));
	else
		snprintf(buf, len, "%lld us", (long long)us);
}

int npa_parse_token(const char *text, uint64_t *token, char *err, size_t errlen)
{
	if (!sq_token_parse(text, strlen(text), token)) {
		snprintf(err, errlen, "'%s' is not a run token: expected exactly 16 hexadecimal "
			 "digits, such as 0123456789abcdef", text);
		return -1;
	}
	return 0;
}

int npa_parse_endpoint(const char *text, struct npa_endpoint *out, char *err, size_t errlen)
{
	char host[256], port[8];
	uint16_t portnum;
	memset(out, 0, sizeof(*out));
	if (strlen(text) >= sizeof(out->text)
	    || !sq_parse_host_port(text, false, host, sizeof(host), &portnum)) {
		snprintf(err, errlen, "'%s' is not HOST:PORT (IPv6 as [ADDR]:PORT, port 1-65535)",
			 text);
		return -1;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)portnum);
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
		return -1;
	}
	memcpy(&out->addr, res->ai_addr, res->ai_addrlen);
	out->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	strcpy(out->text, text);
	return 0;
}

int npa_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *err,
		   size_t errlen)
{
	uint64_t v;
	if (!sq_parse_count(text, max, &v) || v < min) {
		snprintf(err, errlen, "'%s' is not a whole number from %llu to %llu", text,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

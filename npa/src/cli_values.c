#include "cli_values.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int digits_value(const char **p, uint64_t *value, int *count)
{
	*value = 0;
	*count = 0;
	while (**p >= '0' && **p <= '9') {
		if (*value > (UINT64_MAX - 9) / 10)
			return -1;
		*value = *value * 10 + (uint64_t)(**p - '0');
		(*count)++;
		(*p)++;
	}
	return 0;
}

static int unit_scale(const char *unit, int64_t *scale)
{
	if (strcmp(unit, "us") == 0)
		*scale = 1;
	else if (strcmp(unit, "ms") == 0)
		*scale = 1000;
	else if (strcmp(unit, "s") == 0)
		*scale = 1000000;
	else
		return -1;
	return 0;
}

int npa_parse_duration(const char *text, int64_t *us, char *err, size_t errlen)
{
	const char *p = text;
	uint64_t whole, frac = 0;
	int nwhole, nfrac = 0;
	int64_t scale;
	bool ok = digits_value(&p, &whole, &nwhole) == 0 && nwhole > 0;
	if (ok && *p == '.') {
		p++;
		ok = digits_value(&p, &frac, &nfrac) == 0 && nfrac > 0 && nfrac <= 6;
	}
	ok = ok && unit_scale(p, &scale) == 0 && whole <= INT64_MAX / 1000000 / 1000;
	if (ok) {
		int64_t frac_us = (int64_t)frac * scale;
		for (int i = 0; i < nfrac; i++)
			frac_us /= 10;
		*us = (int64_t)whole * scale + frac_us;
		ok = *us > 0;
	}
	if (!ok) {
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

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int npa_parse_token(const char *text, uint64_t *token, char *err, size_t errlen)
{
	const char *p = text;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t v = 0;
	size_t n = strlen(p);
	bool ok = n == 16;
	for (size_t i = 0; ok && i < n; i++) {
		int d = hex_digit(p[i]);
		ok = d >= 0;
		v = v << 4 | (uint64_t)(d < 0 ? 0 : d);
	}
	if (!ok) {
		snprintf(err, errlen, "'%s' is not a run token: expected exactly 16 hexadecimal "
			 "digits, such as 0123456789abcdef", text);
		return -1;
	}
	*token = v;
	return 0;
}

static int split_host_port(const char *text, char *host, size_t hostlen, const char **port)
{
	const char *colon;
	const char *start = text;
	const char *end;
	if (text[0] == '[') {
		end = strchr(text, ']');
		if (end == NULL || end[1] != ':')
			return -1;
		start = text + 1;
		colon = end + 1;
	} else {
		colon = strrchr(text, ':');
		if (colon == NULL || strchr(text, ':') != colon)
			return -1;
		end = colon;
	}
	size_t n = (size_t)(end - start);
	if (n == 0 || n >= hostlen || colon[1] == '\0')
		return -1;
	memcpy(host, start, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

int npa_parse_endpoint(const char *text, struct npa_endpoint *out, char *err, size_t errlen)
{
	char host[256];
	const char *port;
	uint64_t portnum;
	memset(out, 0, sizeof(*out));
	if (strlen(text) >= sizeof(out->text) || split_host_port(text, host, sizeof(host), &port)
	    || npa_parse_uint(port, 1, 65535, &portnum, err, errlen)) {
		snprintf(err, errlen, "'%s' is not HOST:PORT (IPv6 as [ADDR]:PORT, port 1-65535)",
			 text);
		return -1;
	}
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
	const char *p = text;
	uint64_t v;
	int n;
	if (digits_value(&p, &v, &n) != 0 || n == 0 || *p != '\0' || v < min || v > max) {
		snprintf(err, errlen, "'%s' is not a whole number from %llu to %llu", text,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

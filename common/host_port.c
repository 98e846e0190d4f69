#include "host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "value_parse.h"

/* Finds where the host starts and ends and where the port's colon is. */
static bool locate_parts(const char *text, const char **start, const char **end,
			 const char **colon)
{
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (close == NULL || close[1] != ':')
			return false;
		*start = text + 1;
		*end = close;
		*colon = close + 1;
		return true;
	}
	*colon = strchr(text, ':');
	if (*colon == NULL || strchr(*colon + 1, ':') != NULL)
		return false;
	*start = text;
	*end = *colon;
	return true;
}

bool sq_parse_host_port(const char *text, bool allow_port0, char *host, size_t host_size,
			uint16_t *port)
{
	const char *start, *end, *colon;
	uint64_t number;
	if (!locate_parts(text, &start, &end, &colon))
		return false;
	size_t n = (size_t)(end - start);
	if (n == 0 || n >= host_size || !sq_parse_count(colon + 1, 65535, &number))
		return false;
	if (number == 0 && !allow_port0)
		return false;
	memcpy(host, start, n);
	host[n] = '\0';
	*port = (uint16_t)number;
	return true;
}

bool sq_parse_numeric_endpoint(const char *text, bool allow_port0, struct sockaddr_storage *out,
			       socklen_t *out_len)
{
	char host[INET6_ADDRSTRLEN];
	uint16_t port;
	memset(out, 0, sizeof(*out));
	if (!sq_parse_host_port(text, allow_port0, host, sizeof(host), &port))
		return false;
	struct sockaddr_in *v4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
	/* Brackets are how IPv6 is written, so a bracketed IPv4 address is a mistake. */
	if (text[0] != '[' && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		*out_len = sizeof(*v4);
		return true;
	}
	if (text[0] == '[' && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		*out_len = sizeof(*v6);
		return true;
	}
	memset(out, 0, sizeof(*out));
	return false;
}

bool sq_sockaddr_equal(const struct sockaddr *a, socklen_t alen, const struct sockaddr *b, socklen_t blen)
{
	if (alen < sizeof(sa_family_t) || blen < sizeof(sa_family_t) || a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET && alen >= sizeof(struct sockaddr_in) && blen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6 && alen >= sizeof(struct sockaddr_in6) && blen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return false;
}

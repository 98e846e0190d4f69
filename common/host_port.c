#include "host_port.h"

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

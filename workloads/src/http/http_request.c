#include "http_request.h"

#include <stdio.h>
#include <string.h>

static int head(char *out, size_t out_size, const char *url, const char *host, bool http11, bool close)
{
    return snprintf(out, out_size, "GET %s HTTP/1.%d\r\nHost: %s\r\n%sX-Pad: ", url, http11 ? 1 : 0, host,
                    close ? "Connection: close\r\n" : "");
}

size_t http_request_min_size(const char *url, const char *host, bool http11, bool connection_close)
{
    return (size_t)head(NULL, 0, url, host, http11, connection_close) + 4; /* "\r\n\r\n" */
}

int http_request_build(char *out, size_t out_size, size_t size, const char *url, const char *host,
                       bool http11, bool connection_close)
{
    size_t min = http_request_min_size(url, host, http11, connection_close);
    if (size < min || out_size <= size)
        return -1;
    size_t len = (size_t)head(out, out_size, url, host, http11, connection_close);
    size_t pad = size - min;
    memset(out + len, 'x', pad);
    memcpy(out + len + pad, "\r\n\r\n", 5);
    return (int)size;
}

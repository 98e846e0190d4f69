/* Builds GET requests of an exact size (IIP report 5.1: every request is 350 bytes). */
#ifndef HTTP_REQUEST_H
#define HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

/* Writes "GET url HTTP/1.x", Host, optional "Connection: close" and an X-Pad header that
 * brings the request to exactly size bytes into out (out_size > size). Returns the length
 * (== size), or -1 if size cannot hold the request without padding. */
int http_request_build(char *out, size_t out_size, size_t size, const char *url, const char *host,
                       bool http11, bool connection_close);
/* The smallest size http_request_build accepts for these fields. */
size_t http_request_min_size(const char *url, const char *host, bool http11, bool connection_close);

#endif

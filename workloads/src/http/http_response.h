/* Incremental parser of one HTTP response: status line, headers (Content-Length), body.
 * Pure; pipelined responses are parsed by resetting after each completes. */
#ifndef HTTP_RESPONSE_H
#define HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEADER_MAX 8192

enum http_response_state { HTTP_RESP_HEADERS, HTTP_RESP_BODY, HTTP_RESP_DONE, HTTP_RESP_ERROR };

struct http_response {
    enum http_response_state state;
    char header[HTTP_HEADER_MAX + 1];
    size_t header_len;
    int status;
    int64_t content_length; /* -1: not given (body ends at EOF) */
    uint64_t body_bytes;
    bool connection_close;  /* "Connection: close": the server ends the connection after it */
    const char *error;      /* set in HTTP_RESP_ERROR */
};

void http_response_reset(struct http_response *r);
/* Consumes bytes of this response from data; returns how many were consumed (the rest
 * belongs to the next response). */
size_t http_response_feed(struct http_response *r, const uint8_t *data, size_t len);
/* The server closed the connection: completes a body without Content-Length. */
void http_response_eof(struct http_response *r);

#endif

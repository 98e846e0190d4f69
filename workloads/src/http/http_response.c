#include "http_response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void http_response_reset(struct http_response *r)
{
    r->state = HTTP_RESP_HEADERS;
    r->header_len = 0;
    r->header[0] = '\0';
    r->status = 0;
    r->content_length = -1;
    r->body_bytes = 0;
    r->connection_close = false;
    r->error = NULL;
}

static void fail(struct http_response *r, const char *why)
{
    r->state = HTTP_RESP_ERROR;
    r->error = why;
}

/* The value of the first header field called `name` (with its colon), up to its line's end;
 * NULL if the header has none. */
static const char *field_value(const char *header, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (const char *line = strstr(header, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, name, n) == 0) {
            const char *value = line + 2 + n;
            const char *end = strstr(value, "\r\n");
            *len = end ? (size_t)(end - value) : strlen(value);
            return value;
        }
    }
    return NULL;
}

static int64_t find_content_length(const char *header)
{
    size_t len;
    const char *value = field_value(header, "Content-Length:", &len);
    if (value == NULL)
        return -1;
    long long v = strtoll(value, NULL, 10);
    return v >= 0 ? v : -1;
}

/* Connection's tokens, comma-separated, contain "close" (RFC 7230 6.1). */
static bool says_close(const char *header)
{
    size_t len;
    const char *value = field_value(header, "Connection:", &len);
    for (size_t i = 0; value != NULL && i + 5 <= len; i++) {
        bool starts = i == 0 || value[i - 1] == ' ' || value[i - 1] == ',' || value[i - 1] == '\t';
        bool ends = i + 5 == len || value[i + 5] == ' ' || value[i + 5] == ',' || value[i + 5] == '\t';
        if (starts && ends && strncasecmp(value + i, "close", 5) == 0)
            return true;
    }
    return false;
}

static void parse_header(struct http_response *r)
{
    int minor, status;
    if (sscanf(r->header, "HTTP/1.%d %3d", &minor, &status) != 2) {
        fail(r, "the response does not start with an HTTP/1.x status line");
        return;
    }
    r->status = status;
    r->content_length = find_content_length(r->header);
    r->connection_close = says_close(r->header);
    r->state = (r->content_length == 0) ? HTTP_RESP_DONE : HTTP_RESP_BODY;
}

/* Appends header bytes until the blank line; returns bytes consumed. */
static size_t feed_header(struct http_response *r, const uint8_t *data, size_t len)
{
    size_t used = 0;
    while (used < len && r->state == HTTP_RESP_HEADERS) {
        if (r->header_len == HTTP_HEADER_MAX) {
            fail(r, "the response header is longer than 8192 bytes");
            break;
        }
        r->header[r->header_len++] = (char)data[used++];
        r->header[r->header_len] = '\0';
        if (r->header_len >= 4 && memcmp(r->header + r->header_len - 4, "\r\n\r\n", 4) == 0)
            parse_header(r);
    }
    return used;
}

static size_t feed_body(struct http_response *r, const uint8_t *data, size_t len)
{
    (void)data;
    size_t take = len;
    if (r->content_length >= 0) {
        uint64_t left = (uint64_t)r->content_length - r->body_bytes;
        if (take > left)
            take = (size_t)left;
    }
    r->body_bytes += take;
    if (r->content_length >= 0 && r->body_bytes == (uint64_t)r->content_length)
        r->state = HTTP_RESP_DONE;
    return take;
}

size_t http_response_feed(struct http_response *r, const uint8_t *data, size_t len)
{
    size_t used = 0;
    if (r->state == HTTP_RESP_HEADERS)
        used = feed_header(r, data, len);
    if (r->state == HTTP_RESP_BODY)
        used += feed_body(r, data + used, len - used);
    return used;
}

void http_response_eof(struct http_response *r)
{
    if (r->state == HTTP_RESP_BODY && r->content_length < 0)
        r->state = HTTP_RESP_DONE;
    else if (r->state == HTTP_RESP_HEADERS && r->header_len > 0)
        fail(r, "the server closed the connection inside the response header");
}

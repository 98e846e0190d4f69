/* One client connection: non-blocking connect, request writes, response parsing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "http_request.h"
#include "wl_time.h"

static int fail_errno(struct http_page *page, unsigned conn, const char *what)
{
    snprintf(page->error, sizeof page->error, "connection %u to %s: %s: %s", conn, page->remote, what,
             strerror(errno));
    return -1;
}

int http_conn_open(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    const struct http_config *cfg = page->cfg;
    c->fd = socket(cfg->remote.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return fail_errno(page, conn, "creating a TCP socket");
    c->state = CONN_CONNECTING;
    if (wl_set_tos(c->fd, cfg->remote.ss_family, cfg->common.tos) != 0)
        return fail_errno(page, conn, "setting --tos");
    http_response_reset(&c->resp);
    c->connect_start_us = wl_realtime_us();
    http_page_log(page, c->connect_start_us, "connect_start", (int)conn, -1, 0);
    if (connect(c->fd, (const struct sockaddr *)&cfg->remote, cfg->remote_len) != 0 && errno != EINPROGRESS)
        return fail_errno(page, conn, "connect");
    return 0;
}

int http_conn_enqueue(struct http_page *page, unsigned conn, bool connection_close)
{
    struct http_conn *c = &page->conns[conn];
    struct http_object *o = &page->objects[c->queue[c->enqueued]];
    const struct http_config *cfg = page->cfg;
    if (c->out_len + cfg->request_size >= sizeof c->out) {
        snprintf(page->error, sizeof page->error, "connection %u: request buffer full", conn);
        return -1;
    }
    int n = http_request_build(c->out + c->out_len, sizeof c->out - c->out_len, cfg->request_size, o->url,
                               page->host, cfg->http11, connection_close);
    if (n < 0) {
        snprintf(page->error, sizeof page->error, "--request-size %llu is too small for the request of %s "
                 "(at least %zu bytes are needed)", (unsigned long long)cfg->request_size, o->url,
                 http_request_min_size(o->url, page->host, cfg->http11, connection_close));
        return -1;
    }
    c->out_len += (size_t)n;
    c->enqueued++;
    return 0;
}

/* A server may close a persistent connection at any time (nginx after keepalive_timeout idle
 * or keepalive_requests; Apache after KeepAliveTimeout or MaxKeepAliveRequests), and a client
 * then resends the unanswered requests on a new connection (RFC 2616 8.1.4; GETs are
 * idempotent). Only a connection that has answered before is retried (one that never answered
 * is a failing server) and only with nothing of the next response read, so every retry
 * follows progress and the page ends. */
static bool may_retry(const struct http_conn *c)
{
    return c->answered > 0 && c->answered < c->queued && c->resp.header_len == 0;
}

static bool closed_by_peer(int err)
{
    return err == EPIPE || err == ECONNRESET;
}

/* Every request is exactly request_size bytes, so the requests wholly written are known at
 * each write: a request reaches `requested` (and the log) as soon as its last byte is out. */
static void note_written_requests(struct http_page *page, struct http_conn *c, unsigned conn)
{
    size_t size = page->cfg->request_size;
    unsigned first = c->enqueued - (unsigned)(c->out_len / size);
    unsigned written = first + (unsigned)(c->out_sent / size);
    int64_t now = wl_realtime_us();
    for (; c->requested < written; c->requested++) {
        unsigned obj = c->queue[c->requested];
        page->objects[obj].request_sent_us = now;
        http_page_log(page, now, "request_sent", (int)conn, (int)obj, size);
    }
}

static int flush_requests(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    while (c->out_sent < c->out_len) {
        ssize_t n = write(c->fd, c->out + c->out_sent, c->out_len - c->out_sent);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n < 0 && closed_by_peer(errno) && may_retry(c)) {
            /* the server has gone: what it sent before is still to be read, and the read
             * path decides (a retry of what stays unanswered) */
            c->out_len = c->out_sent = 0;
            return 0;
        }
        if (n < 0)
            return fail_errno(page, conn, "writing a request");
        c->out_sent += (size_t)n;
        note_written_requests(page, c, conn);
    }
    c->out_len = c->out_sent = 0;
    return 0;
}

static int finish_connect(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        errno = err ? err : errno;
        return fail_errno(page, conn, "connect");
    }
    if (page->cfg->delayed_acks && wl_delay_acks(c->fd) != 0)
        return fail_errno(page, conn, "setting TCP_QUICKACK = 0 (--delayed-acks)");
    c->state = CONN_OPEN;
    c->connected_us = wl_realtime_us();
    wl_local_endpoint(c->fd, c->local, sizeof c->local);
    http_page_log(page, c->connected_us, "connected", (int)conn, -1, 0);
    return page->events->connected(page, conn);
}

int http_conn_on_writable(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    if (c->state == CONN_CONNECTING && finish_connect(page, conn) != 0)
        return -1;
    return flush_requests(page, conn);
}

static int complete_object(struct http_page *page, unsigned conn, int64_t now)
{
    struct http_conn *c = &page->conns[conn];
    unsigned obj = c->queue[c->answered];
    struct http_object *o = &page->objects[obj];
    o->bytes = c->resp.body_bytes;
    o->last_byte_us = now;
    if (c->resp.status != 200 || o->bytes != o->size) {
        snprintf(page->error, sizeof page->error, "%s on connection %u: expected status 200 and %llu body "
                 "bytes, got status %d and %llu bytes", o->url, conn, (unsigned long long)o->size,
                 c->resp.status, (unsigned long long)o->bytes);
        return -1;
    }
    o->done = true;
    http_page_log(page, now, "last_byte", (int)conn, (int)obj, o->bytes);
    c->answered++;
    http_response_reset(&c->resp);
    return page->events->object_done(page, conn, obj, now);
}

static int consume(struct http_page *page, unsigned conn, const uint8_t *data, size_t len, int64_t now)
{
    struct http_conn *c = &page->conns[conn];
    size_t used = 0;
    while (used < len) {
        if (c->answered >= c->queued) {
            snprintf(page->error, sizeof page->error, "connection %u: %zu bytes after the last expected "
                     "response", conn, len - used);
            return -1;
        }
        struct http_object *o = &page->objects[c->queue[c->answered]];
        if (c->resp.header_len == 0) {
            o->first_byte_us = now;
            http_page_log(page, now, "first_byte", (int)conn, (int)c->queue[c->answered], 0);
        }
        used += http_response_feed(&c->resp, data + used, len - used);
        c->server_closing |= c->resp.connection_close;   /* known from the header on */
        if (c->resp.state == HTTP_RESP_ERROR) {
            snprintf(page->error, sizeof page->error, "%s on connection %u: %s", o->url, conn, c->resp.error);
            return -1;
        }
        if (c->resp.state == HTTP_RESP_DONE && complete_object(page, conn, now) != 0)
            return -1;
        if (c->resp.state == HTTP_RESP_BODY && c->resp.status == 200 &&
            page->events->body_progress(page, conn, c->queue[c->answered], c->resp.body_bytes, now) != 0)
            return -1;
    }
    return 0;
}

/* The server's FIN (or its reset of a connection that may be retried). */
static int on_server_close(struct http_page *page, unsigned conn, int64_t now)
{
    struct http_conn *c = &page->conns[conn];
    bool retry = may_retry(c);
    if (!retry && c->answered < c->queued) {
        http_response_eof(&c->resp);
        if (c->resp.state == HTTP_RESP_DONE && complete_object(page, conn, now) != 0)
            return -1;
    }
    c->state = CONN_CLOSED;
    c->closed_us = now;
    close(c->fd);
    c->fd = -1;
    http_page_log(page, now, "closed", (int)conn, -1, 0);
    if (retry)
        return page->events->closed_with_requests_left(page, conn, now);
    if (c->answered < c->queued) {
        const struct http_object *o = &page->objects[c->queue[c->answered]];
        snprintf(page->error, sizeof page->error, "connection %u closed by the server after %u of %u "
                 "responses (%s: %llu of %llu body bytes)", conn, c->answered, c->queued, o->url,
                 (unsigned long long)c->resp.body_bytes, (unsigned long long)o->size);
        return -1;
    }
    return page->events->closed(page, conn);
}

int http_conn_on_readable(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    uint8_t buf[65536];
    ssize_t n = read(c->fd, buf, sizeof buf);
    int64_t now = wl_realtime_us();
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n < 0 && closed_by_peer(errno) && may_retry(c))
        return on_server_close(page, conn, now);
    if (n < 0)
        return fail_errno(page, conn, "reading a response");
    if (n == 0)
        return on_server_close(page, conn, now);
    if (page->cfg->delayed_acks && wl_delay_acks(c->fd) != 0)
        return fail_errno(page, conn, "setting TCP_QUICKACK = 0 again after a read (--delayed-acks)");
    return consume(page, conn, buf, (size_t)n, now);
}

/* The page: which object goes on which connection and when (HTTP/1.0 vs 1.1), and the
 * event loop that drives the connections until the page is complete. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "http_inline_after.h"
#include "wl_signal.h"
#include "wl_time.h"

static unsigned open_connections(const struct http_page *page)
{
    unsigned open = 0;
    for (unsigned i = 0; i < page->conn_count; i++)
        if (page->conns[i].state == CONN_CONNECTING || page->conns[i].state == CONN_OPEN)
            open++;
    return open;
}

static int new_connection(struct http_page *page, const unsigned *objects, unsigned count, int retry_of)
{
    if (page->conn_count == HTTP_MAX_CONNS) {
        snprintf(page->error, sizeof page->error, "no connection left for %u more requests (at most %d a page)",
                 count, HTTP_MAX_CONNS);
        return -1;
    }
    unsigned id = page->conn_count++;
    struct http_conn *c = &page->conns[id];
    c->fd = -1;
    c->retry_of = retry_of;
    for (unsigned k = 0; k < count; k++) {
        c->queue[c->queued++] = objects[k];
        page->objects[objects[k]].conn = (int)id;
    }
    return http_conn_open(page, id);
}

/* HTTP/1.0: one connection per in-line object, at most --parallel open at a time. */
static int start_inline_connections(struct http_page *page)
{
    while (page->next_inline < page->cfg->object_count && open_connections(page) < page->cfg->parallel) {
        unsigned obj = page->next_inline++;
        if (new_connection(page, &obj, 1, -1) != 0)
            return -1;
    }
    return 0;
}

/* HTTP/1.1: the main object on connection 0, in-line objects round-robin over the
 * --persistent connections; connections other than 0 are opened once the main object is in. */
static void assign_persistent(struct http_page *page)
{
    unsigned conns = page->cfg->persistent;
    unsigned inlines = page->cfg->object_count - 1;
    if (conns > inlines)
        conns = inlines > 0 ? inlines : 1;
    page->conn_count = conns;
    for (unsigned i = 0; i < conns; i++) {
        page->conns[i].fd = -1;
        page->conns[i].retry_of = -1;
    }
    page->conns[0].queue[page->conns[0].queued++] = 0;
    page->objects[0].conn = 0;
    for (unsigned obj = 1; obj < page->cfg->object_count; obj++) {
        struct http_conn *c = &page->conns[(obj - 1) % conns];
        c->queue[c->queued++] = obj;
        page->objects[obj].conn = (int)((obj - 1) % conns);
    }
}

static int fill_requests(struct http_page *page, unsigned conn)
{
    struct http_conn *c = &page->conns[conn];
    if (c->state != CONN_OPEN || c->server_closing)
        return 0;   /* a closing server's unanswered objects go on a new connection at its FIN */
    while (c->enqueued < c->queued) {
        unsigned obj = c->queue[c->enqueued];
        if (obj > 0 && !page->inline_released)
            break; /* the browser learns of in-line objects from the main object */
        if (!page->cfg->pipeline && c->enqueued > c->answered)
            break;
        bool last = c->enqueued + 1 == c->queued;
        if (http_conn_enqueue(page, conn, page->cfg->http11 && last) != 0)
            return -1;
    }
    return 0;
}

/* The main object has come as far as --inline-after asks: HTTP/1.0 opens in-line connections
 * up to --parallel open ones, HTTP/1.1 opens its other connection and lets connection 0
 * queue its in-line requests (all at once with --pipeline). */
static int release_inline_requests(struct http_page *page, unsigned conn, uint64_t body_bytes, int64_t now)
{
    page->inline_released = true;
    page->inline_release_us = now;
    http_page_log(page, now, "inline_release", (int)conn, 0, body_bytes);
    if (!page->cfg->http11)
        return start_inline_connections(page);
    for (unsigned i = 1; i < page->conn_count; i++)
        if (page->conns[i].state == CONN_UNUSED && http_conn_open(page, i) != 0)
            return -1;
    return fill_requests(page, 0);
}

static int on_body_progress(struct http_page *page, unsigned conn, unsigned object, uint64_t body_bytes,
                            int64_t now)
{
    if (object != 0 || page->inline_released ||
        !http_inline_after_reached(page->cfg->inline_after, body_bytes, page->objects[0].size))
        return 0;
    return release_inline_requests(page, conn, body_bytes, now);
}

static int on_object_done(struct http_page *page, unsigned conn, unsigned object, int64_t now)
{
    if (object == 0 && !page->inline_released)
        return release_inline_requests(page, conn, page->objects[0].bytes, now);
    return page->cfg->http11 ? fill_requests(page, conn) : 0;
}

static int on_conn_closed(struct http_page *page, unsigned conn)
{
    (void)conn;
    return (!page->cfg->http11 && page->inline_released) ? start_inline_connections(page) : 0;
}

/* The server closed a connection that had answered before, with requests unanswered and
 * nothing of the next response read (http_conn.c): they go, in order, on a new connection. */
static int retry(struct http_page *page, unsigned conn, int64_t now)
{
    const struct http_conn *old = &page->conns[conn];
    unsigned rest[HTTP_MAX_OBJECTS];
    unsigned count = old->queued - old->answered;
    for (unsigned k = 0; k < count; k++)
        rest[k] = old->queue[old->answered + k];
    http_page_log(page, now, "retry", (int)page->conn_count, (int)rest[0], count);
    page->retried_requests += old->requested - old->answered;   /* on the wire twice */
    return new_connection(page, rest, count, (int)conn);
}

static const struct http_conn_events page_events = {
    .connected = fill_requests,
    .body_progress = on_body_progress,
    .object_done = on_object_done,
    .closed = on_conn_closed,
    .closed_with_requests_left = retry,
};

static bool page_finished(const struct http_page *page)
{
    for (unsigned i = 0; i < page->cfg->object_count; i++)
        if (!page->objects[i].done)
            return false;
    return open_connections(page) == 0;
}

static unsigned objects_done(const struct http_page *page)
{
    unsigned done = 0;
    for (unsigned i = 0; i < page->cfg->object_count; i++)
        done += page->objects[i].done;
    return done;
}

static int wait_ms(const struct http_page *page)
{
    int64_t left = page->deadline_mono_ns - wl_monotonic_ns();
    return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

static int poll_once(struct http_page *page)
{
    struct pollfd fds[HTTP_MAX_CONNS];
    unsigned ids[HTTP_MAX_CONNS];
    nfds_t n = 0;
    for (unsigned i = 0; i < page->conn_count; i++) {
        struct http_conn *c = &page->conns[i];
        if (c->state != CONN_CONNECTING && c->state != CONN_OPEN)
            continue;
        short events = c->state == CONN_CONNECTING ? POLLOUT : POLLIN;
        if (c->state == CONN_OPEN && c->out_sent < c->out_len)
            events |= POLLOUT;
        fds[n] = (struct pollfd){.fd = c->fd, .events = events};
        ids[n++] = i;
    }
    int ready = poll(fds, n, wait_ms(page));
    if (ready < 0 && errno != EINTR) {
        snprintf(page->error, sizeof page->error, "poll: %s", strerror(errno));
        return -1;
    }
    for (nfds_t k = 0; ready > 0 && k < n; k++) {
        if ((fds[k].revents & (POLLOUT | POLLERR | POLLHUP)) && page->conns[ids[k]].state == CONN_CONNECTING) {
            if (http_conn_on_writable(page, ids[k]) != 0)
                return -1;
            continue;
        }
        if ((fds[k].revents & POLLOUT) && http_conn_on_writable(page, ids[k]) != 0)
            return -1;
        if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && page->conns[ids[k]].state == CONN_OPEN &&
            http_conn_on_readable(page, ids[k]) != 0)
            return -1;
    }
    return 0;
}

static int start_page(struct http_page *page)
{
    for (unsigned i = 0; i < page->cfg->object_count; i++) {
        struct http_object *o = &page->objects[i];
        o->size = page->cfg->sizes[i];
        o->conn = -1;
        snprintf(o->url, sizeof o->url, "/obj/%u-%llu", i, (unsigned long long)o->size);
    }
    if (!page->cfg->http11) {
        unsigned main_object = 0;
        page->next_inline = 1;
        return new_connection(page, &main_object, 1, -1);
    }
    assign_persistent(page);
    return http_conn_open(page, 0);
}

int http_page_run(struct http_page *page)
{
    page->deadline_mono_ns = wl_monotonic_ns() + page->cfg->timeout_us * 1000;
    page->events = &page_events;
    if (start_page(page) != 0)
        return -1;
    while (!page_finished(page)) {
        if (wl_stop_requested) {
            snprintf(page->error, sizeof page->error, "stopped by a signal with %u of %u objects complete",
                     objects_done(page), page->cfg->object_count);
            return -1;
        }
        if (wait_ms(page) == 0) {
            snprintf(page->error, sizeof page->error, "--timeout %.3fs expired with %u of %u objects complete",
                     (double)page->cfg->timeout_us / 1e6, objects_done(page), page->cfg->object_count);
            return -1;
        }
        if (poll_once(page) != 0)
            return -1;
    }
    return 0;
}

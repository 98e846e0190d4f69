/* squall-http: the page model (main object, then in-line objects) over HTTP/1.0 parallel
 * connections or HTTP/1.1 persistent (optionally pipelined) connections. */
#ifndef HTTP_CLIENT_H
#define HTTP_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "http_response.h"
#include "wl_net.h"
#include "wl_options.h"

#define HTTP_MAX_OBJECTS 256
#define HTTP_MAX_CONNS HTTP_MAX_OBJECTS
#define HTTP_URL_MAX 64
#define HTTP_REQUEST_MAX 65536

struct http_config {
    struct sockaddr_storage remote;
    socklen_t remote_len;
    uint64_t sizes[HTTP_MAX_OBJECTS]; /* [0] main object */
    unsigned object_count;
    const char *workload; /* label, or NULL for --objects */
    bool http11;
    unsigned parallel;   /* HTTP/1.0: max open connections */
    unsigned persistent; /* HTTP/1.1: number of connections */
    bool pipeline;
    uint64_t inline_after; /* body bytes of the main object (http_inline_after.h) */
    bool delayed_acks;     /* TCP_QUICKACK = 0 once connected and after every read */
    uint64_t request_size;
    int64_t timeout_us;
    const char *host;    /* Host header; NULL: the --connect address */
    struct wl_common_options common;
};

struct http_object {
    char url[HTTP_URL_MAX];
    uint64_t size;
    int conn; /* -1 until assigned */
    bool done;
    int64_t request_sent_us, first_byte_us, last_byte_us;
    uint64_t bytes;
};

enum http_conn_state { CONN_UNUSED, CONN_CONNECTING, CONN_OPEN, CONN_CLOSED };

struct http_conn {
    enum http_conn_state state;
    int fd;
    char local[WL_ENDPOINT_STRLEN];
    int64_t connect_start_us, connected_us, closed_us;
    unsigned queue[HTTP_MAX_OBJECTS]; /* object indices in request order */
    unsigned queued;      /* assigned objects */
    unsigned enqueued;    /* requests put into the out buffer */
    unsigned requested;   /* requests written (fully) */
    unsigned answered;    /* responses complete */
    char out[HTTP_REQUEST_MAX];
    size_t out_len, out_sent;
    struct http_response resp;
    int retry_of;         /* the connection whose unanswered requests this one resends; -1: none */
    bool server_closing;  /* a response said "Connection: close": no more requests on it */
};

struct http_page;

/* What a connection reports to the page that drives it: the connection layer (http_conn.c)
 * calls these and nothing else of the page, so the calls run one way. Each returns 0, or -1
 * with page->error set. */
struct http_conn_events {
    /* Connected: the page may put requests into it now (http_conn_enqueue). */
    int (*connected)(struct http_page *page, unsigned conn);
    /* More body bytes of a 200 response have arrived. */
    int (*body_progress)(struct http_page *page, unsigned conn, unsigned object, uint64_t body_bytes, int64_t now);
    int (*object_done)(struct http_page *page, unsigned conn, unsigned object, int64_t now);
    /* Closed by the server with every response complete. */
    int (*closed)(struct http_page *page, unsigned conn);
    /* Closed by the server after answering before, with requests unanswered and nothing of the
     * next response read: the page resends them on a new connection (RFC 2616 8.1.4). */
    int (*closed_with_requests_left)(struct http_page *page, unsigned conn, int64_t now);
};

struct http_page {
    const struct http_config *cfg;
    FILE *log;
    char host[WL_ENDPOINT_STRLEN + 64];
    char remote[WL_ENDPOINT_STRLEN];
    char error[512];
    struct http_object objects[HTTP_MAX_OBJECTS];
    struct http_conn *conns; /* HTTP_MAX_CONNS */
    unsigned conn_count;
    unsigned next_inline;    /* HTTP/1.0: next in-line object to start */
    unsigned retried_requests; /* written again on a new connection after the server closed (RFC 2616 8.1.4) */
    bool inline_released;    /* the main object has come as far as --inline-after asks */
    int64_t inline_release_us;
    int64_t deadline_mono_ns;
    const struct http_conn_events *events; /* what the connections report to (the page's own) */
};

/* Runs the page; returns 0 when every object arrived complete, -1 with page->error set. */
int http_page_run(struct http_page *page);
/* Prints the one-line JSON summary. */
void http_page_print_summary(const struct http_page *page, bool ok);
/* Connection I/O (http_conn.c), driven by the page's event loop; a connection reports back
 * only through page->events. */
int http_conn_open(struct http_page *page, unsigned conn);
int http_conn_on_writable(struct http_page *page, unsigned conn);
int http_conn_on_readable(struct http_page *page, unsigned conn);
int http_conn_enqueue(struct http_page *page, unsigned conn, bool connection_close);
/* The page's event log (http_summary.c). */
void http_page_log(struct http_page *page, int64_t t, const char *event, int conn, int object, uint64_t bytes);

#endif

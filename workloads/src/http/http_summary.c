/* The HTTP client's event log lines and one-line JSON summary (workloads/README.md). */
#include <stdio.h>

#include "http_client.h"
#include "http_inline_after.h"
#include "wl_json.h"

void http_page_log(struct http_page *page, int64_t t, const char *event, int conn, int object, uint64_t bytes)
{
    if (page->log)
        fprintf(page->log, "%lld\t%s\t%d\t%d\t%llu\n", (long long)t, event, conn, object, (unsigned long long)bytes);
}

static void print_object(struct wl_json *j, const struct http_object *o, unsigned index)
{
    wl_json_begin_object(j, NULL);
    wl_json_int(j, "index", index);
    wl_json_str(j, "url", o->url);
    wl_json_int(j, "size", (int64_t)o->size);
    wl_json_int(j, "conn", o->conn);
    wl_json_bool(j, "complete", o->done);
    wl_json_int(j, "request_sent_us", o->request_sent_us);
    wl_json_int(j, "first_byte_us", o->first_byte_us);
    wl_json_int(j, "last_byte_us", o->last_byte_us);
    wl_json_int(j, "bytes", (int64_t)o->bytes);
    wl_json_end_object(j);
}

static void print_conn(struct wl_json *j, const struct http_conn *c, unsigned index)
{
    wl_json_begin_object(j, NULL);
    wl_json_int(j, "conn", index);
    wl_json_str(j, "local", c->local[0] ? c->local : "?");
    wl_json_int(j, "connect_start_us", c->connect_start_us);
    wl_json_int(j, "connected_us", c->connected_us);
    wl_json_int(j, "closed_us", c->closed_us);
    wl_json_int(j, "requests", c->requested);
    wl_json_int(j, "retry_of", c->retry_of);
    wl_json_end_object(j);
}

struct page_times {
    int64_t start, last_byte, end;
};

static struct page_times page_times(const struct http_page *page)
{
    struct page_times t = {0};
    for (unsigned i = 0; i < page->conn_count; i++) {
        const struct http_conn *c = &page->conns[i];
        if (c->connect_start_us && (t.start == 0 || c->connect_start_us < t.start))
            t.start = c->connect_start_us;
        if (c->closed_us > t.end)
            t.end = c->closed_us;
    }
    for (unsigned i = 0; i < page->cfg->object_count; i++)
        if (page->objects[i].last_byte_us > t.last_byte)
            t.last_byte = page->objects[i].last_byte_us;
    return t;
}

void http_page_print_summary(const struct http_page *page, bool ok)
{
    const struct http_config *cfg = page->cfg;
    struct page_times t = page_times(page);
    struct wl_json j;
    wl_json_begin_summary(&j, "squall-http", NULL, ok, page->error);
    wl_json_str(&j, "http", cfg->http11 ? "1.1" : "1.0");
    wl_json_str(&j, "workload", cfg->workload ? cfg->workload : "custom");
    wl_json_str(&j, "remote", page->remote);
    wl_json_int(&j, "parallel", cfg->http11 ? 0 : cfg->parallel);
    wl_json_int(&j, "persistent", cfg->http11 ? cfg->persistent : 0);
    wl_json_bool(&j, "pipeline", cfg->pipeline);
    char inline_after[HTTP_INLINE_AFTER_STRLEN];
    http_inline_after_format(cfg->inline_after, inline_after, sizeof inline_after);
    wl_json_str(&j, "inline_after", inline_after);
    wl_json_int(&j, "inline_release_us", page->inline_release_us);
    wl_json_bool(&j, "delayed_acks", cfg->delayed_acks);
    wl_json_int(&j, "request_size", (int64_t)cfg->request_size);
    wl_json_int(&j, "page_start_us", t.start);
    wl_json_int(&j, "page_last_byte_us", t.last_byte);
    wl_json_int(&j, "page_end_us", t.end);
    wl_json_int(&j, "response_time_us", ok ? t.end - t.start : 0);
    wl_json_int(&j, "retried_requests", page->retried_requests);
    wl_json_begin_array(&j, "objects");
    for (unsigned i = 0; i < cfg->object_count; i++)
        print_object(&j, &page->objects[i], i);
    wl_json_end_array(&j);
    wl_json_begin_array(&j, "connections");
    for (unsigned i = 0; i < page->conn_count; i++)
        print_conn(&j, &page->conns[i], i);
    wl_json_end_array(&j);
    wl_json_end_object(&j);
    wl_json_print(&j, stdout);
    wl_json_free(&j);
}

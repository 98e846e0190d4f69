/* squall-bulk send: connect, write count × length bytes, FIN, wait for the receiver's FIN. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bulk.h"
#include "wl_json.h"
#include "wl_log.h"
#include "wl_net.h"
#include "wl_signal.h"
#include "wl_time.h"

struct send_state {
    const struct bulk_send_config *cfg;
    FILE *log;
    char local[WL_ENDPOINT_STRLEN];
    char remote[WL_ENDPOINT_STRLEN];
    char error[256];
    uint64_t bytes;
    int64_t connect_start_us, connected_us, last_write_us, end_us;
};

static void log_event(struct send_state *s, int64_t t, const char *event)
{
    if (s->log)
        fprintf(s->log, "%lld\t%s\t0\t%llu\n", (long long)t, event, (unsigned long long)s->bytes);
}

static int fail(struct send_state *s, const char *what)
{
    snprintf(s->error, sizeof s->error, "%s %s: %s", what, s->remote, strerror(errno));
    return -1;
}

static int open_connected(struct send_state *s)
{
    const struct bulk_send_config *cfg = s->cfg;
    int fd = socket(cfg->remote.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(s, "creating a TCP socket for");
    int one = 1;
    if (wl_set_tos(fd, cfg->remote.ss_family, cfg->common.tos) != 0 ||
        (cfg->nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)) {
        fail(s, "setting socket options for");
        close(fd);
        return -1;
    }
    s->connect_start_us = wl_realtime_us();
    log_event(s, s->connect_start_us, "connect_start");
    if (connect(fd, (const struct sockaddr *)&cfg->remote, cfg->remote_len) != 0) {
        fail(s, "connecting to");
        close(fd);
        return -1;
    }
    s->connected_us = wl_realtime_us();
    wl_local_endpoint(fd, s->local, sizeof s->local);
    log_event(s, s->connected_us, "connected");
    return fd;
}

static int write_all(struct send_state *s, int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR && !wl_stop_requested)
            continue;
        if (n <= 0)
            return fail(s, "writing to");
        done += (size_t)n;
        s->bytes += (uint64_t)n;
    }
    return 0;
}

static int send_buffers(struct send_state *s, int fd)
{
    char *buf = calloc(1, s->cfg->length);
    if (!buf) {
        snprintf(s->error, sizeof s->error, "cannot allocate a --length buffer of %llu bytes",
                 (unsigned long long)s->cfg->length);
        return -1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < s->cfg->count && rc == 0; i++)
        rc = write_all(s, fd, buf, s->cfg->length);
    free(buf);
    s->last_write_us = wl_realtime_us();
    return rc;
}

/* The receiver closes after reading everything: its FIN tells us all data has arrived. */
static int await_peer_close(struct send_state *s, int fd)
{
    if (shutdown(fd, SHUT_WR) != 0)
        return fail(s, "shutting down the sending side towards");
    char sink[4096];
    for (;;) {
        ssize_t n = read(fd, sink, sizeof sink);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR && !wl_stop_requested)
            continue;
        if (n < 0)
            return fail(s, "waiting for the receiver to close");
    }
    s->end_us = wl_realtime_us();
    log_event(s, s->end_us, "end");
    return 0;
}

static void print_summary(const struct send_state *s, bool ok)
{
    struct wl_json j;
    wl_json_begin_summary(&j, "squall-bulk", "send", ok, s->error);
    wl_json_str(&j, "local", s->local);
    wl_json_str(&j, "remote", s->remote);
    wl_json_int(&j, "count", (int64_t)s->cfg->count);
    wl_json_int(&j, "length", (int64_t)s->cfg->length);
    wl_json_int(&j, "bytes", (int64_t)s->bytes);
    wl_json_int(&j, "connect_start_us", s->connect_start_us);
    wl_json_int(&j, "connected_us", s->connected_us);
    wl_json_int(&j, "last_write_us", s->last_write_us);
    wl_json_int(&j, "end_us", s->end_us);
    wl_json_end_object(&j);
    wl_json_print(&j, stdout);
    wl_json_free(&j);
}

int bulk_send(const struct bulk_send_config *cfg)
{
    struct send_state s = {.cfg = cfg};
    int log_failed;
    wl_format_endpoint(&cfg->remote, s.remote, sizeof s.remote);
    snprintf(s.local, sizeof s.local, "?");
    s.log = wl_log_open(cfg->common.log_path, "squall-bulk", "send", "time_us\tevent\tconn\tbytes", &log_failed);
    if (log_failed)
        return 1;
    wl_sleep_us(cfg->common.start_offset_us, &wl_stop_requested);
    int rc = -1;
    int fd = wl_stop_requested ? -1 : open_connected(&s);
    if (fd >= 0) {
        rc = send_buffers(&s, fd);
        if (rc == 0)
            rc = await_peer_close(&s, fd);
        close(fd);
    } else if (wl_stop_requested) {
        snprintf(s.error, sizeof s.error, "stopped by a signal before connecting");
    }
    if (wl_log_close(s.log, cfg->common.log_path) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "squall-bulk send: %s\n", s.error);
    print_summary(&s, rc == 0);
    return rc == 0 ? 0 : 1;
}

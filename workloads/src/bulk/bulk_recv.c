/* squall-bulk recv: accept --connections connections, read each to EOF, count bytes. */
#include <errno.h>
#include <poll.h>
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

struct recv_conn {
    int fd; /* -1 once closed */
    char peer[WL_ENDPOINT_STRLEN];
    uint64_t bytes;
    int64_t accept_us, first_byte_us, last_byte_us, end_us;
};

struct recv_state {
    const struct bulk_recv_config *cfg;
    FILE *log;
    char listen[WL_ENDPOINT_STRLEN];
    char error[256];
    struct recv_conn *conns;
    size_t accepted;
    size_t finished;
};

static void log_event(struct recv_state *s, int64_t t, const char *event, size_t conn)
{
    if (s->log)
        fprintf(s->log, "%lld\t%s\t%zu\t%llu\n", (long long)t, event, conn,
                (unsigned long long)s->conns[conn].bytes);
}

/* --delayed-acks, on a new connection and after every read of it. */
static int delay_acks(struct recv_state *s, size_t i, const char *when)
{
    if (!s->cfg->delayed_acks || wl_delay_acks(s->conns[i].fd) == 0)
        return 0;
    snprintf(s->error, sizeof s->error, "setting TCP_QUICKACK = 0 (--delayed-acks) %s on the connection from "
             "%s: %s", when, s->conns[i].peer, strerror(errno));
    return -1;
}

static int accept_one(struct recv_state *s, int listener)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    int fd = accept4(listener, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
            return 0;
        snprintf(s->error, sizeof s->error, "accepting a connection on %s: %s", s->listen, strerror(errno));
        return -1;
    }
    struct recv_conn *c = &s->conns[s->accepted];
    *c = (struct recv_conn){.fd = fd, .accept_us = wl_realtime_us()};
    wl_format_endpoint(&peer, c->peer, sizeof c->peer);
    log_event(s, c->accept_us, "accept", s->accepted);
    s->accepted++;
    return delay_acks(s, s->accepted - 1, "after accepting it");
}

static int read_some(struct recv_state *s, size_t i, char *buf, size_t size)
{
    struct recv_conn *c = &s->conns[i];
    ssize_t n = read(c->fd, buf, size);
    int64_t now = wl_realtime_us();
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n < 0) {
        snprintf(s->error, sizeof s->error, "reading from %s: %s", c->peer, strerror(errno));
        return -1;
    }
    if (n == 0) {
        close(c->fd);
        c->fd = -1;
        c->end_us = now;
        if (c->bytes > 0)
            log_event(s, c->last_byte_us, "last_byte", i);
        log_event(s, now, "end", i);
        s->finished++;
        return 0;
    }
    if (c->bytes == 0) {
        c->first_byte_us = now;
        c->bytes = (uint64_t)n;
        log_event(s, now, "first_byte", i);
    } else {
        c->bytes += (uint64_t)n;
    }
    c->last_byte_us = now;
    return delay_acks(s, i, "again after a read");
}

static int serve(struct recv_state *s, int listener)
{
    size_t want = s->cfg->connections;
    struct pollfd *fds = calloc(want + 1, sizeof *fds);
    char *buf = malloc(65536);
    int rc = (fds && buf) ? 0 : -1;
    if (rc != 0)
        snprintf(s->error, sizeof s->error, "out of memory");
    while (rc == 0 && s->finished < want && !wl_stop_requested) {
        nfds_t n = 0;
        fds[n++] = (struct pollfd){.fd = s->accepted < want ? listener : -1, .events = POLLIN};
        for (size_t i = 0; i < s->accepted; i++)
            fds[n++] = (struct pollfd){.fd = s->conns[i].fd, .events = POLLIN};
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            snprintf(s->error, sizeof s->error, "poll: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (fds[0].revents & POLLIN)
            rc = accept_one(s, listener);
        for (size_t i = 0; rc == 0 && i + 1 < n; i++)
            if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
                rc = read_some(s, i, buf, 65536);
    }
    if (rc == 0 && s->finished < want) {
        snprintf(s->error, sizeof s->error, "stopped by a signal with %zu of %zu connections complete",
                 s->finished, want);
        rc = -1;
    }
    free(buf);
    free(fds);
    return rc;
}

static void print_connection(struct wl_json *j, const struct recv_conn *c, size_t i)
{
    wl_json_begin_object(j, NULL);
    wl_json_int(j, "conn", (int64_t)i);
    wl_json_str(j, "peer", c->peer);
    wl_json_int(j, "accept_us", c->accept_us);
    wl_json_int(j, "first_byte_us", c->first_byte_us);
    wl_json_int(j, "last_byte_us", c->last_byte_us);
    wl_json_int(j, "end_us", c->end_us);
    wl_json_int(j, "bytes", (int64_t)c->bytes);
    wl_json_end_object(j);
}

static void print_summary(const struct recv_state *s, bool ok)
{
    uint64_t bytes = 0;
    int64_t first = 0, last = 0;
    for (size_t i = 0; i < s->accepted; i++) {
        const struct recv_conn *c = &s->conns[i];
        bytes += c->bytes;
        if (c->bytes > 0 && (first == 0 || c->first_byte_us < first))
            first = c->first_byte_us;
        if (c->last_byte_us > last)
            last = c->last_byte_us;
    }
    struct wl_json j;
    wl_json_begin_summary(&j, "squall-bulk", "recv", ok, s->error);
    wl_json_str(&j, "listen", s->listen);
    wl_json_bool(&j, "delayed_acks", s->cfg->delayed_acks);
    wl_json_int(&j, "bytes", (int64_t)bytes);
    wl_json_int(&j, "first_byte_us", first);
    wl_json_int(&j, "last_byte_us", last);
    wl_json_begin_array(&j, "connections");
    for (size_t i = 0; i < s->accepted; i++)
        print_connection(&j, &s->conns[i], i);
    wl_json_end_array(&j);
    wl_json_end_object(&j);
    wl_json_print(&j, stdout);
    wl_json_free(&j);
}

int bulk_recv(const struct bulk_recv_config *cfg)
{
    struct recv_state s = {.cfg = cfg};
    int log_failed;
    s.conns = calloc(cfg->connections, sizeof *s.conns);
    if (!s.conns) {
        fprintf(stderr, "squall-bulk recv: out of memory for %llu connections\n",
                (unsigned long long)cfg->connections);
        return 1;
    }
    int listener = wl_open_listener(&cfg->local, cfg->local_len, SOCK_STREAM, cfg->common.tos);
    if (listener < 0) {
        free(s.conns);
        return 1;
    }
    wl_local_endpoint(listener, s.listen, sizeof s.listen);
    s.log = wl_log_open(cfg->common.log_path, "squall-bulk", "recv", "time_us\tevent\tconn\tbytes", &log_failed);
    wl_log_header(s.log, "delayed_acks", cfg->delayed_acks ? "on" : "off");
    int rc = log_failed ? -1 : serve(&s, listener);
    if (log_failed)
        snprintf(s.error, sizeof s.error, "cannot open the --log file");
    close(listener);
    for (size_t i = 0; i < s.accepted; i++)
        if (s.conns[i].fd >= 0)
            close(s.conns[i].fd);
    rc = wl_log_finish(s.log, cfg->common.log_path, rc, "squall-bulk recv", s.error, sizeof s.error);
    print_summary(&s, rc == 0);
    free(s.conns);
    return rc == 0 ? 0 : 1;
}

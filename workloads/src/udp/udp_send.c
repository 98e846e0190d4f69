/* squall-udp send: datagram i leaves at start + i × interval (absolute schedule), or as fast
 * as possible with sendmmsg for --rate max. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "udp.h"
#include "udp_payload.h"
#include "wl_json.h"
#include "wl_log.h"
#include "wl_net.h"
#include "wl_signal.h"
#include "wl_time.h"

enum { MAX_BATCH = 64 };

struct send_state {
    const struct udp_send_config *cfg;
    FILE *log;
    int fd;
    char remote[WL_ENDPOINT_STRLEN];
    char error[256];
    int64_t interval_ns; /* 0 for --rate max */
    uint64_t packets, send_errors;
    int64_t start_us, end_us;
};

/* Errors a CBR source rides through: queue full, or an ICMP error for an earlier datagram. */
static bool transient_send_error(int err)
{
    return err == ENOBUFS || err == EAGAIN || err == ECONNREFUSED || err == EHOSTUNREACH ||
           err == ENETUNREACH || err == EINTR;
}

static int64_t interval_ns(const struct udp_send_config *cfg)
{
    if (cfg->rate.max)
        return 0;
    double seconds = cfg->rate.per_packet ? 1.0 / cfg->rate.value : (double)cfg->size * 8.0 / cfg->rate.value;
    return (int64_t)llround(seconds * 1e9);
}

static bool schedule_done(const struct send_state *s, uint64_t i, int64_t elapsed_ns)
{
    const struct udp_send_config *cfg = s->cfg;
    if (cfg->count && i >= cfg->count)
        return true;
    return cfg->duration_us && elapsed_ns >= cfg->duration_us * 1000;
}

static int send_one(struct send_state *s, uint8_t *buf, uint64_t seq)
{
    int64_t now = wl_realtime_us();
    udp_payload_write(buf, seq, now);
    ssize_t n = send(s->fd, buf, s->cfg->size, 0);
    if (n < 0) {
        if (!transient_send_error(errno)) {
            snprintf(s->error, sizeof s->error, "sending to %s: %s", s->remote, strerror(errno));
            return -1;
        }
        s->send_errors++;
        return 0;
    }
    s->packets++;
    if (s->log)
        fprintf(s->log, "%lld\tsent\t%llu\t%llu\n", (long long)now, (unsigned long long)seq,
                (unsigned long long)s->cfg->size);
    return 0;
}

static int send_paced(struct send_state *s, uint8_t *buf)
{
    int64_t start = wl_monotonic_ns();
    for (uint64_t i = 0; !wl_stop_requested; i++) {
        int64_t offset = (int64_t)i * s->interval_ns;
        if (schedule_done(s, i, offset))
            break;
        if (wl_sleep_until_ns(start + offset) == EINTR) {
            i--; /* woken by a signal: re-check the stop flag, then the same datagram */
            continue;
        }
        if (send_one(s, buf, i) != 0)
            return -1;
    }
    return 0;
}

static int send_batch(struct send_state *s, uint8_t *bufs, uint64_t first_seq, unsigned n)
{
    struct mmsghdr msgs[MAX_BATCH];
    struct iovec iov[MAX_BATCH];
    int64_t now = wl_realtime_us();
    for (unsigned k = 0; k < n; k++) {
        uint8_t *buf = bufs + (size_t)k * s->cfg->size;
        udp_payload_write(buf, first_seq + k, now);
        iov[k] = (struct iovec){.iov_base = buf, .iov_len = s->cfg->size};
        msgs[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
    }
    int sent = sendmmsg(s->fd, msgs, n, 0);
    if (sent < 0) {
        if (!transient_send_error(errno)) {
            snprintf(s->error, sizeof s->error, "sending to %s: %s", s->remote, strerror(errno));
            return -1;
        }
        s->send_errors += n;
        return 0;
    }
    s->packets += (uint64_t)sent;
    s->send_errors += n - (unsigned)sent;
    return 0;
}

static int send_flood(struct send_state *s)
{
    uint8_t *bufs = calloc(MAX_BATCH, s->cfg->size);
    if (!bufs) {
        snprintf(s->error, sizeof s->error, "out of memory for %d datagrams of --size %llu", MAX_BATCH,
                 (unsigned long long)s->cfg->size);
        return -1;
    }
    int64_t start = wl_monotonic_ns();
    uint64_t seq = 0;
    int rc = 0;
    while (rc == 0 && !wl_stop_requested && !schedule_done(s, seq, wl_monotonic_ns() - start)) {
        uint64_t left = s->cfg->count ? s->cfg->count - seq : MAX_BATCH;
        unsigned n = left < MAX_BATCH ? (unsigned)left : MAX_BATCH;
        rc = send_batch(s, bufs, seq, n);
        seq += n;
    }
    free(bufs);
    return rc;
}

static int open_socket(struct send_state *s)
{
    const struct udp_send_config *cfg = s->cfg;
    s->fd = socket(cfg->remote.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || wl_set_tos(s->fd, cfg->remote.ss_family, cfg->common.tos) != 0 ||
        connect(s->fd, (const struct sockaddr *)&cfg->remote, cfg->remote_len) != 0) {
        snprintf(s->error, sizeof s->error, "opening a UDP socket towards %s: %s", s->remote, strerror(errno));
        return -1;
    }
    return 0;
}

static void print_summary(const struct send_state *s, bool ok)
{
    struct wl_json j;
    wl_json_begin_summary(&j, "squall-udp", "send", ok, s->error);
    wl_json_str(&j, "remote", s->remote);
    wl_json_int(&j, "size", (int64_t)s->cfg->size);
    wl_json_str(&j, "rate", s->cfg->rate_text);
    wl_json_num(&j, "interval_us", (double)s->interval_ns / 1000.0);
    wl_json_int(&j, "packets", (int64_t)s->packets);
    wl_json_int(&j, "bytes", (int64_t)(s->packets * s->cfg->size));
    wl_json_int(&j, "send_errors", (int64_t)s->send_errors);
    wl_json_int(&j, "start_us", s->start_us);
    wl_json_int(&j, "end_us", s->end_us);
    wl_json_end_object(&j);
    wl_json_print(&j, stdout);
    wl_json_free(&j);
}

static int run(struct send_state *s)
{
    uint8_t *buf = calloc(1, s->cfg->size);
    if (!buf) {
        snprintf(s->error, sizeof s->error, "out of memory for a datagram of --size %llu",
                 (unsigned long long)s->cfg->size);
        return -1;
    }
    int rc = open_socket(s);
    if (rc == 0) {
        s->start_us = wl_realtime_us();
        if (s->log)
            fprintf(s->log, "%lld\tstart\t0\t0\n", (long long)s->start_us);
        rc = s->cfg->rate.max ? send_flood(s) : send_paced(s, buf);
        s->end_us = wl_realtime_us();
        if (s->log)
            fprintf(s->log, "%lld\tend\t%llu\t0\n", (long long)s->end_us, (unsigned long long)s->packets);
    }
    free(buf);
    return rc;
}

int udp_send(const struct udp_send_config *cfg)
{
    struct send_state s = {.cfg = cfg, .fd = -1, .interval_ns = interval_ns(cfg)};
    int log_failed;
    wl_format_endpoint(&cfg->remote, s.remote, sizeof s.remote);
    if (!cfg->rate.max && s.interval_ns <= 0) {
        fprintf(stderr, "--rate: %s gives an interval below 1 ns for --size %llu; use 'max'\n",
                cfg->rate_text, (unsigned long long)cfg->size);
        return 2;
    }
    s.log = wl_log_open(cfg->common.log_path, "squall-udp", "send", "time_us\tevent\tseq\tsize", &log_failed);
    if (log_failed)
        return 1;
    wl_precise_timers();
    wl_sleep_us(cfg->common.start_offset_us, &wl_stop_requested);
    int rc = run(&s);
    if (s.fd >= 0)
        close(s.fd);
    rc = wl_log_finish(s.log, cfg->common.log_path, rc, "squall-udp send", s.error, sizeof s.error);
    print_summary(&s, rc == 0);
    return rc == 0 ? 0 : 1;
}

/* squall-udp recv: logs every datagram with the kernel's receive timestamp and computes the
 * stream statistics at the end. recvmmsg keeps up with --rate max senders. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "udp.h"
#include "udp_payload.h"
#include "udp_stats.h"
#include "wl_json.h"
#include "wl_log.h"
#include "wl_net.h"
#include "wl_signal.h"
#include "wl_time.h"

enum { BATCH = 64, CONTROL_SIZE = 64 };

struct recv_state {
    const struct udp_recv_config *cfg;
    FILE *log;
    int fd;
    char listen[WL_ENDPOINT_STRLEN];
    char error[256];
    struct udp_stats stats;
    uint64_t invalid;
    int64_t ready_mono_ns;
    int64_t last_arrival_mono_ns; /* 0 before the first datagram */
};

struct recv_batch {
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    uint8_t data[BATCH][UDP_PAYLOAD_MAX + 1];
    uint8_t control[BATCH][CONTROL_SIZE];
};

static void enlarge_receive_buffer(int fd)
{
    int size = 8 * 1024 * 1024;
    /* FORCE needs CAP_NET_ADMIN; without it the plain option is capped by rmem_max. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

static int64_t kernel_timestamp_us(struct msghdr *msg)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
        }
    }
    return wl_realtime_us();
}

static int account(struct recv_state *s, const uint8_t *data, size_t len, int64_t recv_us)
{
    uint64_t seq;
    int64_t send_us;
    if (!udp_payload_read(data, len, &seq, &send_us)) {
        s->invalid++;
        return 0;
    }
    if (udp_stats_add(&s->stats, seq, send_us, recv_us, len) != 0) {
        snprintf(s->error, sizeof s->error, "out of memory for the sequence bitmap at seq %llu",
                 (unsigned long long)seq);
        return -1;
    }
    if (s->log)
        fprintf(s->log, "%lld\t%llu\t%lld\t%zu\n", (long long)recv_us, (unsigned long long)seq,
                (long long)send_us, len);
    return 0;
}

/* Reads what is queued; returns the number of datagrams or -1 on a socket error. */
static int drain(struct recv_state *s, struct recv_batch *b)
{
    for (int k = 0; k < BATCH; k++) {
        b->iov[k] = (struct iovec){.iov_base = b->data[k], .iov_len = sizeof b->data[k]};
        b->msgs[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &b->iov[k], .msg_iovlen = 1,
            .msg_control = b->control[k], .msg_controllen = CONTROL_SIZE}};
    }
    int n = recvmmsg(s->fd, b->msgs, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED)
            return 0;
        snprintf(s->error, sizeof s->error, "receiving on %s: %s", s->listen, strerror(errno));
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (account(s, b->data[k], b->msgs[k].msg_len, kernel_timestamp_us(&b->msgs[k].msg_hdr)) != 0)
            return -1;
    if (n > 0)
        s->last_arrival_mono_ns = wl_monotonic_ns();
    return n;
}

/* Milliseconds until the nearest end condition, -1 for none, 0 when one has been reached. */
static int wait_budget_ms(const struct recv_state *s)
{
    int64_t now = wl_monotonic_ns();
    int64_t deadline = -1;
    if (s->cfg->duration_us)
        deadline = s->ready_mono_ns + s->cfg->duration_us * 1000;
    if (s->cfg->idle_timeout_us && s->last_arrival_mono_ns) {
        int64_t idle_end = s->last_arrival_mono_ns + s->cfg->idle_timeout_us * 1000;
        if (deadline < 0 || idle_end < deadline)
            deadline = idle_end;
    }
    if (deadline < 0)
        return -1;
    if (now >= deadline)
        return 0;
    return (int)((deadline - now + 999999) / 1000000);
}

static int receive_until_done(struct recv_state *s)
{
    struct recv_batch *b = malloc(sizeof *b);
    if (!b) {
        snprintf(s->error, sizeof s->error, "out of memory for the receive buffers");
        return -1;
    }
    int rc = 0;
    while (!wl_stop_requested) {
        int budget = wait_budget_ms(s);
        if (budget == 0)
            break;
        struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
        int ready = poll(&pfd, 1, budget);
        if (ready < 0 && errno != EINTR) {
            snprintf(s->error, sizeof s->error, "poll: %s", strerror(errno));
            rc = -1;
            break;
        }
        int n = 0;
        while (ready > 0 && (n = drain(s, b)) == BATCH)
            ;
        if (ready > 0 && n < 0) {
            rc = -1;
            break;
        }
    }
    free(b);
    return rc;
}

static void print_summary(const struct recv_state *s, bool ok)
{
    const struct udp_stats *st = &s->stats;
    uint64_t expected = udp_stats_expected(st);
    struct wl_json j;
    wl_json_begin_summary(&j, "squall-udp", "recv", ok, s->error);
    wl_json_str(&j, "listen", s->listen);
    wl_json_int(&j, "received", (int64_t)st->received);
    wl_json_int(&j, "bytes", (int64_t)st->bytes);
    wl_json_int(&j, "duplicates", (int64_t)st->duplicates);
    wl_json_int(&j, "invalid", (int64_t)s->invalid);
    wl_json_int(&j, "expected", (int64_t)expected);
    wl_json_int(&j, "lost", (int64_t)udp_stats_lost(st));
    wl_json_num(&j, "loss", expected ? (double)udp_stats_lost(st) / (double)expected : 0.0);
    wl_json_int(&j, "reordered", (int64_t)st->reordered);
    wl_json_int(&j, "first_recv_us", st->first_recv_us);
    wl_json_int(&j, "last_recv_us", st->last_recv_us);
    wl_json_num(&j, "throughput_bps", udp_stats_throughput_bps(st));
    wl_json_num(&j, "packets_per_s", udp_stats_packets_per_s(st));
    wl_json_num(&j, "jitter_mean_us", udp_stats_jitter_mean_us(st));
    wl_json_int(&j, "jitter_min_us", st->jitter_min_us);
    wl_json_int(&j, "jitter_max_us", st->jitter_max_us);
    wl_json_int(&j, "jitter_samples", (int64_t)st->jitter_samples);
    wl_json_end_object(&j);
    wl_json_print(&j, stdout);
    wl_json_free(&j);
}

int udp_recv(const struct udp_recv_config *cfg)
{
    struct recv_state s = {.cfg = cfg};
    int log_failed, one = 1;
    udp_stats_init(&s.stats);
    s.fd = wl_open_listener(&cfg->local, cfg->local_len, SOCK_DGRAM, cfg->common.tos);
    if (s.fd < 0)
        return 1;
    s.ready_mono_ns = wl_monotonic_ns();
    wl_local_endpoint(s.fd, s.listen, sizeof s.listen);
    enlarge_receive_buffer(s.fd);
    setsockopt(s.fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    s.log = wl_log_open(cfg->common.log_path, "squall-udp", "recv", "recv_us\tseq\tsend_us\tsize", &log_failed);
    int rc = log_failed ? -1 : receive_until_done(&s);
    if (log_failed)
        snprintf(s.error, sizeof s.error, "cannot open the --log file");
    close(s.fd);
    rc = wl_log_finish(s.log, cfg->common.log_path, rc, "squall-udp recv", s.error, sizeof s.error);
    print_summary(&s, rc == 0);
    udp_stats_free(&s.stats);
    return rc == 0 ? 0 : 1;
}

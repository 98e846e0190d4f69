#include "udp_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void udp_stats_init(struct udp_stats *s)
{
    memset(s, 0, sizeof *s);
}

void udp_stats_free(struct udp_stats *s)
{
    free(s->seen);
    memset(s, 0, sizeof *s);
}

static int ensure_bitmap(struct udp_stats *s, uint64_t seq)
{
    size_t need = (size_t)(seq / 8) + 1;
    if (need <= s->seen_bytes)
        return 0;
    size_t cap = s->seen_bytes ? s->seen_bytes : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *grown = realloc(s->seen, cap);
    if (!grown)
        return -1;
    memset(grown + s->seen_bytes, 0, cap - s->seen_bytes);
    s->seen = grown;
    s->seen_bytes = cap;
    return 0;
}

/* Marks seq as seen; true if it had been seen before. */
static bool mark_seen(struct udp_stats *s, uint64_t seq)
{
    uint8_t bit = (uint8_t)(1u << (seq % 8));
    bool before = s->seen[seq / 8] & bit;
    s->seen[seq / 8] |= bit;
    return before;
}

static void add_jitter(struct udp_stats *s, uint64_t seq, int64_t send_us, int64_t recv_us)
{
    if (s->received == 0 || seq != s->prev_seq + 1)
        return;
    int64_t change = (recv_us - s->prev_recv_us) - (send_us - s->prev_send_us);
    if (change < 0)
        change = -change;
    if (s->jitter_samples == 0 || change < s->jitter_min_us)
        s->jitter_min_us = change;
    s->jitter_samples++;
    s->jitter_sum_us += change;
    if (change > s->jitter_max_us)
        s->jitter_max_us = change;
}

int udp_stats_add(struct udp_stats *s, uint64_t seq, int64_t send_us, int64_t recv_us, size_t size)
{
    if (ensure_bitmap(s, seq) != 0)
        return -1;
    if (mark_seen(s, seq))
        s->duplicates++;
    else
        s->distinct++;
    if (s->received > 0 && seq < s->highest_seq)
        s->reordered++;
    add_jitter(s, seq, send_us, recv_us);
    if (s->received == 0 || seq > s->highest_seq)
        s->highest_seq = seq;
    if (s->received == 0)
        s->first_recv_us = recv_us;
    s->last_recv_us = recv_us;
    s->received++;
    s->bytes += size;
    s->prev_seq = seq;
    s->prev_send_us = send_us;
    s->prev_recv_us = recv_us;
    return 0;
}

uint64_t udp_stats_expected(const struct udp_stats *s)
{
    return s->received ? s->highest_seq + 1 : 0;
}

uint64_t udp_stats_lost(const struct udp_stats *s)
{
    return udp_stats_expected(s) - s->distinct;
}

static double span_s(const struct udp_stats *s)
{
    return (double)(s->last_recv_us - s->first_recv_us) / 1e6;
}

double udp_stats_throughput_bps(const struct udp_stats *s)
{
    if (s->received < 2 || span_s(s) <= 0)
        return NAN;
    return (double)s->bytes * 8.0 / span_s(s);
}

double udp_stats_packets_per_s(const struct udp_stats *s)
{
    if (s->received < 2 || span_s(s) <= 0)
        return NAN;
    return (double)(s->received - 1) / span_s(s);
}

double udp_stats_jitter_mean_us(const struct udp_stats *s)
{
    return s->jitter_samples ? (double)s->jitter_sum_us / (double)s->jitter_samples : NAN;
}

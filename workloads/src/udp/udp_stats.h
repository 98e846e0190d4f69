/* Receiver statistics of a CBR stream (IIP report section 6): loss, duplicates, reordering,
 * throughput and jitter. Pure: fed with (seq, send time, receive time, size) in arrival order. */
#ifndef UDP_STATS_H
#define UDP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udp_stats {
    uint64_t received;      /* valid datagrams, duplicates included */
    uint64_t bytes;         /* their payload bytes */
    uint64_t duplicates;
    uint64_t distinct;
    uint64_t reordered;     /* arrived with a lower seq than one already received */
    uint64_t highest_seq;
    int64_t first_recv_us, last_recv_us;
    /* jitter over pairs received one after the other with consecutive seqs */
    uint64_t jitter_samples;
    int64_t jitter_sum_us, jitter_min_us, jitter_max_us;
    /* the previous datagram in arrival order */
    uint64_t prev_seq;
    int64_t prev_send_us, prev_recv_us;
    uint8_t *seen;          /* bitmap of received seqs */
    size_t seen_bytes;
};

void udp_stats_init(struct udp_stats *s);
void udp_stats_free(struct udp_stats *s);
/* Returns -1 only when memory for the sequence bitmap cannot be had. */
int udp_stats_add(struct udp_stats *s, uint64_t seq, int64_t send_us, int64_t recv_us, size_t size);

uint64_t udp_stats_expected(const struct udp_stats *s); /* highest seq + 1, 0 if none */
uint64_t udp_stats_lost(const struct udp_stats *s);
double udp_stats_throughput_bps(const struct udp_stats *s); /* NaN below two datagrams */
double udp_stats_packets_per_s(const struct udp_stats *s);  /* NaN below two datagrams */
double udp_stats_jitter_mean_us(const struct udp_stats *s); /* NaN without a pair */

#endif

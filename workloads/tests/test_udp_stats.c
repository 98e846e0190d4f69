/* CBR receiver statistics: loss, duplicates, reordering and the IIP jitter definition. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../src/udp/udp_payload.h"
#include "../src/udp/udp_stats.h"

static void jitter_ignores_pairs_across_a_loss(void **state)
{
    (void)state;
    struct udp_stats s;
    udp_stats_init(&s);
    /* sent every 33 ms; seq 2 lost; seq 3 arrives 5 ms late */
    assert_int_equal(udp_stats_add(&s, 0, 0, 1000, 132), 0);
    assert_int_equal(udp_stats_add(&s, 1, 33000, 34500, 132), 0);   /* spacing 33500 vs 33000: 500 */
    assert_int_equal(udp_stats_add(&s, 3, 99000, 105000, 132), 0);  /* across the loss: ignored */
    assert_int_equal(udp_stats_add(&s, 4, 132000, 133000, 132), 0); /* 28000 vs 33000: 5000 */
    assert_int_equal(s.jitter_samples, 2);
    assert_int_equal(s.jitter_max_us, 5000);
    assert_int_equal(s.jitter_min_us, 500);
    assert_true(fabs(udp_stats_jitter_mean_us(&s) - 2750.0) < 1e-9);
    assert_int_equal(udp_stats_expected(&s), 5);
    assert_int_equal(udp_stats_lost(&s), 1);
    assert_int_equal(s.reordered, 0);
    udp_stats_free(&s);
}

static void reordering_and_duplicates_are_counted(void **state)
{
    (void)state;
    struct udp_stats s;
    udp_stats_init(&s);
    const uint64_t order[] = {0, 2, 1, 3, 3, 4};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        assert_int_equal(udp_stats_add(&s, order[i], (int64_t)order[i] * 1000, 5000 + (int64_t)i * 1000, 100), 0);
    assert_int_equal(s.received, 6);
    assert_int_equal(s.duplicates, 1);
    assert_int_equal(s.distinct, 5);
    assert_int_equal(s.reordered, 1);      /* 1 after 2; the duplicate 3 is not lower than 3 */
    assert_int_equal(udp_stats_lost(&s), 0);
    /* arrival pairs 0→2, 2→1, 1→3, 3→3 are not consecutive seqs; only 3→4 counts */
    assert_int_equal(s.jitter_samples, 1);
    assert_int_equal(s.jitter_max_us, 0);
    udp_stats_free(&s);
}

static void throughput_uses_first_to_last_receive_time(void **state)
{
    (void)state;
    struct udp_stats s;
    udp_stats_init(&s);
    for (uint64_t i = 0; i < 11; i++)
        assert_int_equal(udp_stats_add(&s, i, (int64_t)i * 33000, 1000 + (int64_t)i * 33000, 132), 0);
    /* 11 × 132 B over 10 × 33 ms */
    assert_true(fabs(udp_stats_throughput_bps(&s) - 11.0 * 132 * 8 / 0.33) < 1e-6);
    assert_true(fabs(udp_stats_packets_per_s(&s) - 10.0 / 0.33) < 1e-9);
    assert_int_equal(s.jitter_samples, 10);
    assert_int_equal(s.jitter_max_us, 0);
    udp_stats_free(&s);
}

static void payload_round_trip_and_rejects(void **state)
{
    (void)state;
    uint8_t buf[64] = {0};
    uint64_t seq;
    int64_t t;
    udp_payload_write(buf, 0x0102030405060708ull & (UDP_SEQ_LIMIT - 1), 1795316516575000);
    assert_true(udp_payload_read(buf, sizeof buf, &seq, &t));
    assert_int_equal(seq, 0x0102030405060708ull & (UDP_SEQ_LIMIT - 1));
    assert_int_equal(t, 1795316516575000);
    assert_int_equal(buf[0], 0x53);
    assert_int_equal(buf[3], 0x44);
    assert_false(udp_payload_read(buf, UDP_PAYLOAD_HEADER - 1, &seq, &t));
    buf[0] = 0;
    assert_false(udp_payload_read(buf, sizeof buf, &seq, &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jitter_ignores_pairs_across_a_loss),
        cmocka_unit_test(reordering_and_duplicates_are_counted),
        cmocka_unit_test(throughput_uses_first_to_last_receive_time),
        cmocka_unit_test(payload_round_trip_and_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

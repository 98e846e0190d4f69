/* Command-line values: durations, rates, endpoints; bad ones are refused. */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wl_parse.h"

static void durations(void **state)
{
    (void)state;
    int64_t us;
    assert_int_equal(wl_parse_duration_us("--d", "300ms", false, &us), 0);
    assert_int_equal(us, 300000);
    assert_int_equal(wl_parse_duration_us("--d", "2.5s", false, &us), 0);
    assert_int_equal(us, 2500000);
    assert_int_equal(wl_parse_duration_us("--d", "5", false, &us), 0);
    assert_int_equal(us, 5000000);
    assert_int_equal(wl_parse_duration_us("--d", "1min", false, &us), 0);
    assert_int_equal(us, 60000000);
    assert_int_equal(wl_parse_duration_us("--d", "0", true, &us), 0);
    assert_int_equal(us, 0);
    assert_int_equal(wl_parse_duration_us("--d", "0", false, &us), -1);
    assert_int_equal(wl_parse_duration_us("--d", "-1s", true, &us), -1);
    assert_int_equal(wl_parse_duration_us("--d", "5 parsecs", true, &us), -1);
    assert_int_equal(wl_parse_duration_us("--d", "0.1", false, &us), 0);
    assert_int_equal(us, 100000);   /* exact, no floating-point rounding */
    assert_int_equal(wl_parse_duration_us("--d", "1.5min", false, &us), 0);
    assert_int_equal(us, 90000000);
    assert_int_equal(wl_parse_duration_us("--d", "1.0000001s", false, &us), -1);   /* not whole µs */
    assert_int_equal(wl_parse_duration_us("--d", "1e3ms", false, &us), -1);
    assert_int_equal(wl_parse_duration_us("--d", "99999999999999999999", false, &us), -1);
}

static void rates(void **state)
{
    (void)state;
    struct wl_rate r;
    assert_int_equal(wl_parse_rate("--rate", "32kbit", &r), 0);
    assert_true(r.value == 32000 && !r.per_packet && !r.max);
    assert_int_equal(wl_parse_rate("--rate", "30pps", &r), 0);
    assert_true(r.value == 30 && r.per_packet);
    assert_int_equal(wl_parse_rate("--rate", "max", &r), 0);
    assert_true(r.max);
    assert_int_equal(wl_parse_rate("--rate", "0kbit", &r), -1);
    assert_int_equal(wl_parse_rate("--rate", "-5kbit", &r), -1);
    assert_int_equal(wl_parse_rate("--rate", "32kbps", &r), -1);
    assert_int_equal(wl_parse_rate("--rate", "1.5Mbit", &r), 0);
    assert_true(r.value == 1500000 && !r.per_packet);
    assert_int_equal(wl_parse_rate("--rate", "0.5pps", &r), 0);
    assert_true(r.value == 0.5 && r.per_packet);
    assert_int_equal(wl_parse_rate("--rate", "0pps", &r), -1);
    assert_int_equal(wl_parse_rate("--rate", "0.5bit", &r), -1);
    assert_int_equal(wl_parse_rate("--rate", "unlimited", &r), -1);
}

static void endpoints(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len;
    assert_int_equal(wl_parse_endpoint("--c", "198.18.40.1:5001", false, &ss, &len), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 5001);
    assert_int_equal(wl_parse_endpoint("--c", "[2001:db8::1]:80", false, &ss, &len), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(wl_parse_endpoint("--c", "2001:db8::1:80", false, &ss, &len), -1);
    assert_int_equal(wl_parse_endpoint("--c", "198.18.40.1:0", false, &ss, &len), -1);
    assert_int_equal(wl_parse_endpoint("--c", "198.18.40.1:0", true, &ss, &len), 0);
    assert_int_equal(wl_parse_endpoint("--c", "host.example:80", false, &ss, &len), -1);
    assert_int_equal(wl_parse_endpoint("--c", "198.18.40.1:65536", false, &ss, &len), -1);
}

static void unsigned_values(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(wl_parse_uint("--count", "90", 1, 100, &v), 0);
    assert_int_equal(v, 90);
    assert_int_equal(wl_parse_uint("--count", "0", 1, 100, &v), -1);
    assert_int_equal(wl_parse_uint("--count", "-3", 1, 100, &v), -1);
    assert_int_equal(wl_parse_uint("--count", "12x", 1, 100, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations), cmocka_unit_test(rates),
        cmocka_unit_test(endpoints), cmocka_unit_test(unsigned_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
